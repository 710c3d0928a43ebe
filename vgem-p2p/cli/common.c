// SPDX-License-Identifier: MIT
/* Helpers shared by the subcommands: devices, buffers, patterns, output. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"

/* How a module of the tree is loaded, in a guest of ./qemu/vp2p. */
static void load_command(const char *module, char *buf, size_t len)
{
	const char *dir = getenv("VP2P_MODULES");

	/*
	 * edu_nic's registrations are RDMA umems: ib_uverbs holds them.
	 * vgem_p2p is a TTM driver.
	 */
	snprintf(buf, len, "%sinsmod %s/vgem-p2p/%s/%s.ko%s",
		 strcmp(module, "edu_nic") ? "modprobe drm_ttm_helper && " :
					      "modprobe ib_uverbs && ",
		 dir && *dir ? dir : "build/modules",
		 strcmp(module, "edu_nic") ? "exporter" : "importer", module,
		 strcmp(module, "edu_nic") ? "" : " dma_bits=64");
}

/* Devices @module's PCI driver is bound to */
static int bound_devices(const char *module)
{
	char path[128];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s", module);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir)))
		n += !strncmp(d->d_name, "0000:", 5) ||
		     (strlen(d->d_name) == 12 && d->d_name[4] == ':');
	closedir(dir);
	return n;
}

/*
 * Why @module offers no device, and what to do: not loaded (the command
 * that loads it), or loaded and bound to nothing (for edu_nic, nearly
 * always its DMA mask: it binds with dma_bits matching the device's
 * dma_mask, which its default of 28 does not on the project's edu).
 */
void module_hint(const char *module, char *buf, size_t len)
{
	char cmd[256], path[64];

	snprintf(path, sizeof(path), "/sys/module/%s", module);
	load_command(module, cmd, sizeof(cmd));
	if (access(path, F_OK))
		snprintf(buf, len, "%s is not loaded: %s", module, cmd);
	else if (bound_devices(module))
		snprintf(buf, len, "%s is bound to %d device(s): 'vgem-p2p info' lists them",
			 module, bound_devices(module));
	else if (!strcmp(module, "edu_nic"))
		snprintf(buf, len,
			 "edu_nic is loaded but bound to no device: its dma_bits (default 28) must match the edu's dma_mask (see dmesg); reload it: rmmod edu_nic; %s",
			 cmd);
	else
		snprintf(buf, len, "%s is loaded but bound to no device (see dmesg)",
			 module);
}

int ctx_exporter(struct ctx *c)
{
	char hint[512];
	int fd;

	if (c->efd >= 0)
		return c->efd;
	fd = vp2p_exporter_open(c->exporter);
	if (fd < 0) {
		module_hint("vgem_p2p", hint, sizeof(hint));
		out_err(fd, "no vgem_p2p exporter %d (%s)", c->exporter, hint);
		return -1;
	}
	c->efd = fd;
	return fd;
}

int ctx_importer(struct ctx *c)
{
	char hint[512];
	int fd;

	if (c->ifd >= 0)
		return c->ifd;
	fd = vp2p_importer_open(c->importer);
	if (fd < 0) {
		module_hint("edu_nic", hint, sizeof(hint));
		out_err(fd, "no importer /dev/edu_nic%d (%s)", c->importer,
			hint);
		return -1;
	}
	c->ifd = fd;
	return fd;
}

/* "4096", "64K", "2M", "1G" */
int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K':
		v <<= 10; end++; break;
	case 'm': case 'M':
		v <<= 20; end++; break;
	case 'g': case 'G':
		v <<= 30; end++; break;
	}
	if (*end == 'i' || *end == 'B')
		end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
	if (*end || !v)
		return -EINVAL;
	*out = v;
	return 0;
}

static const char *const mem_names[] = {
	[MEM_VRAM] = "vram",
	[MEM_SYSTEM] = "system",
	[MEM_ANON] = "anon",
	[MEM_DEVMEM] = "devmem",
};

int parse_mem(const char *s, enum mem_kind *kind)
{
	unsigned int i;

	for (i = 0; i < sizeof(mem_names) / sizeof(mem_names[0]); i++) {
		if (!strcmp(s, mem_names[i])) {
			*kind = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *mem_name(enum mem_kind kind)
{
	return mem_names[kind];
}

int parse_mode(const char *s, uint32_t *mode)
{
	if (!strcmp(s, "device"))
		*mode = EDU_NIC_MODE_DEVICE;
	else if (!strcmp(s, "bulk"))
		*mode = EDU_NIC_MODE_BULK;
	else
		return -EINVAL;
	return 0;
}

const char *mode_name(uint32_t mode)
{
	return mode == EDU_NIC_MODE_DEVICE ? "device" : "bulk";
}

/*
 * Allocates the workload's memory. Sizes are rounded up to pages: every
 * registration is page-granular.
 */
int vbuf_create(struct ctx *c, enum mem_kind kind, uint64_t size,
		uint32_t bo_flags, struct vbuf *b)
{
	long page = sysconf(_SC_PAGESIZE);
	int prot = PROT_READ | PROT_WRITE;
	void *p;
	int fd, ret;

	memset(b, 0, sizeof(*b));
	b->kind = kind;
	b->size = (size + page - 1) & ~(uint64_t)(page - 1);

	if (kind == MEM_ANON || kind == MEM_DEVMEM) {
		p = mmap(NULL, b->size, prot, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (p == MAP_FAILED)
			return out_err(-errno, "mmap %" PRIu64 " bytes",
				       b->size);
		b->ptr = p;
		return 0;
	}

	fd = ctx_exporter(c);
	if (fd < 0)
		return 1;
	if (kind == MEM_SYSTEM)
		bo_flags |= VGEM_P2P_CREATE_SYSTEM;
	ret = vp2p_bo_create(fd, b->size, bo_flags, &b->bo);
	if (ret)
		return out_err(ret, "create a %" PRIu64 "-byte %s object",
			       b->size, mem_name(kind));
	b->size = b->bo.size;
	ret = vp2p_bo_mmap(fd, &b->bo, prot, &p);
	if (ret) {
		vp2p_bo_close(fd, &b->bo);
		b->bo.handle = 0;
		return out_err(ret, "mmap object %u", b->bo.handle);
	}
	b->ptr = p;
	return 0;
}

/* MEM_DEVMEM: the data is written first, so every page has one to move. */
int vbuf_migrate(struct ctx *c, struct vbuf *b)
{
	int fd = ctx_exporter(c), ret;

	if (fd < 0)
		return 1;
	ret = vp2p_migrate(fd, b->ptr, b->size, VGEM_P2P_MIGRATE_TO_DEVICE,
			   &b->migrated);
	if (ret)
		return out_err(ret, "migrate %" PRIu64 " bytes to device memory",
			       b->size);
	return 0;
}

void vbuf_destroy(struct ctx *c, struct vbuf *b)
{
	if (b->ptr)
		munmap(b->ptr, b->size);
	if (b->bo.handle)
		vp2p_bo_close(c->efd, &b->bo);
	memset(b, 0, sizeof(*b));
}

/* A byte pattern that differs with position and seed: offsets are caught. */
static inline uint8_t pattern_byte(uint64_t pos, uint32_t seed)
{
	return (uint8_t)((pos * 131 + seed * 7 + (pos >> 12)) ^ (seed >> 3));
}

void pattern_fill(void *buf, uint64_t len, uint64_t base, uint32_t seed)
{
	uint8_t *p = buf;
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern_byte(base + i, seed);
}

/* The first mismatching offset, or -1 when all of it matches */
int64_t pattern_check(const void *buf, uint64_t len, uint64_t base,
		      uint32_t seed)
{
	const volatile uint8_t *p = buf;
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern_byte(base + i, seed))
			return (int64_t)i;
	return -1;
}

/*
 * Device mode moves a page per edu command pair (about 0.2 s each), so
 * the range goes in page chunks and progress shows; bulk in 1 MiB ones.
 */
int dma_range(struct ctx *c, uint32_t key, uint32_t dir, uint32_t mode,
	      uint64_t off, void *buf, uint64_t len, const char *what)
{
	uint64_t chunk = mode == EDU_NIC_MODE_DEVICE ? 4096 : 1 << 20;
	uint64_t done = 0, n;
	int ret;

	while (done < len) {
		n = len - done < chunk ? len - done : chunk;
		ret = vp2p_dma(c->ifd, key, dir, mode, off + done,
			       (uint8_t *)buf + done, n);
		if (ret)
			return ret;
		done += n;
		progress(what, done, len);
	}
	progress_done();
	return 0;
}

#define S(f) out_u64(#f, s->f)
void out_exporter_stats(const char *key, const struct drm_vgem_p2p_stats *s)
{
	out_obj(key);
	S(p2p_maps); S(p2p_unmaps); S(p2p_pages_bus); S(p2p_pages_iova);
	S(fallbacks); S(moves); S(evictions); S(compactions);
	S(invalidations); S(bytes_copied); S(bytes_bounced);
	S(devmem_p2p_maps); S(devmem_to_device); S(devmem_to_ram);
	S(vram_size); S(vram_used); S(devmem_size); S(devmem_used);
	out_close();
}

void out_importer_stats(const char *key, const struct edu_nic_stats *s)
{
	out_obj(key);
	S(pages_p2p); S(pages_system); S(cur_pages_p2p); S(cur_pages_system);
	S(faults); S(fault_retries); S(invalidations); S(remaps);
	S(p2p_maps); S(device_dma_bytes); S(device_dma_cmds); S(bulk_bytes);
	S(errors); S(nr_mrs); S(pages_bus); S(pages_iova);
	out_close();
}
#undef S

/* Only the counters a workload moves: what happened during it. */
#define D(f) out_u64(#f, b->f - a->f)
void out_exporter_delta(const char *key, const struct drm_vgem_p2p_stats *a,
			const struct drm_vgem_p2p_stats *b)
{
	out_obj(key);
	D(p2p_maps); D(p2p_unmaps); D(p2p_pages_bus); D(p2p_pages_iova);
	D(fallbacks); D(moves); D(evictions); D(compactions);
	D(invalidations); D(bytes_copied); D(bytes_bounced);
	D(devmem_p2p_maps); D(devmem_to_device); D(devmem_to_ram);
	out_close();
}
#undef D

void out_bo_info(const char *key, const struct drm_vgem_p2p_obj_info *i)
{
	out_obj(key);
	out_u64("handle", i->handle);
	out_u64("size", i->size);
	out_str("placement", i->placement == VGEM_P2P_PLACEMENT_VRAM ?
		"vram" : "system");
	if (i->placement == VGEM_P2P_PLACEMENT_VRAM)
		out_hex("vram_offset", i->vram_offset);
	out_hex("flags", i->flags);
	out_u64("mappings", i->mappings);
	out_u64("moves", i->moves);
	out_u64("p2p_maps", i->p2p_maps);
	out_u64("fallback_maps", i->fallback_maps);
	out_close();
}

bool want_help(const struct command *cmd, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: vgem-p2p [--json] %s %s", cmd->name,
			       cmd->help);
			return true;
		}
	}
	return false;
}

bool cli_dry_run;

bool dry_run_begin(void)
{
	if (!cli_dry_run)
		return false;
	out_begin();
	out_bool("dry_run", true);
	return true;
}
