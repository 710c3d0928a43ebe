/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints: events/vgem_p2p/ in tracefs.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vgem_p2p

#if !defined(_VGEM_P2P_TRACE_H_) || defined(TRACE_HEADER_MULTI_READ)
#define _VGEM_P2P_TRACE_H_

#include <linux/device.h>
#include <linux/tracepoint.h>

#include "vgem_p2p_drv.h"

DECLARE_EVENT_CLASS(vgem_p2p_mapping_class,
	TP_PROTO(struct vgem_p2p_object *bo, struct vgem_p2p_lease *map),
	TP_ARGS(bo, map),
	TP_STRUCT__entry(
		__field(const void *, bo)
		__string(importer, dev_name(map->importer))
		__field(unsigned long, first)
		__field(unsigned long, npages)
		__field(int, kind)
		__field(int, dir)
	),
	TP_fast_assign(
		__entry->bo = bo;
		vgem_p2p_assign_str(importer, dev_name(map->importer));
		__entry->first = map->first;
		__entry->npages = map->npages;
		__entry->kind = map->kind;
		__entry->dir = map->dir;
	),
	TP_printk("bo=%p importer=%s pages=%lu+%lu kind=%s dir=%d",
		  __entry->bo, __get_str(importer), __entry->first,
		  __entry->npages,
		  __print_symbolic(__entry->kind,
				   { VGEM_P2P_MAP_BUS, "bus" },
				   { VGEM_P2P_MAP_IOVA, "iova" },
				   { VGEM_P2P_MAP_SYSTEM, "system" }),
		  __entry->dir)
);

DEFINE_EVENT(vgem_p2p_mapping_class, vgem_p2p_map,
	TP_PROTO(struct vgem_p2p_object *bo, struct vgem_p2p_lease *map),
	TP_ARGS(bo, map));

DEFINE_EVENT(vgem_p2p_mapping_class, vgem_p2p_unmap,
	TP_PROTO(struct vgem_p2p_object *bo, struct vgem_p2p_lease *map),
	TP_ARGS(bo, map));

DECLARE_EVENT_CLASS(vgem_p2p_move_class,
	TP_PROTO(struct vgem_p2p_object *bo, u64 from, u64 to),
	TP_ARGS(bo, from, to),
	TP_STRUCT__entry(
		__field(const void *, bo)
		__field(u64, size)
		__field(u64, from)
		__field(u64, to)
	),
	TP_fast_assign(
		__entry->bo = bo;
		__entry->size = bo->tbo.base.size;
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("bo=%p size=%llu vram 0x%llx -> 0x%llx (~0: system)",
		  __entry->bo, __entry->size, __entry->from, __entry->to)
);

/* A move starts copying */
DEFINE_EVENT(vgem_p2p_move_class, vgem_p2p_move_begin,
	TP_PROTO(struct vgem_p2p_object *bo, u64 from, u64 to),
	TP_ARGS(bo, from, to));

/* A move into or within VRAM is done (vgem_p2p_evict: out of it) */
DEFINE_EVENT(vgem_p2p_move_class, vgem_p2p_move,
	TP_PROTO(struct vgem_p2p_object *bo, u64 from, u64 to),
	TP_ARGS(bo, from, to));

TRACE_EVENT(vgem_p2p_evict,
	TP_PROTO(struct vgem_p2p_object *bo, u64 from),
	TP_ARGS(bo, from),
	TP_STRUCT__entry(
		__field(const void *, bo)
		__field(u64, size)
		__field(u64, from)
	),
	TP_fast_assign(
		__entry->bo = bo;
		__entry->size = bo->tbo.base.size;
		__entry->from = from;
	),
	TP_printk("bo=%p size=%llu vram 0x%llx -> system",
		  __entry->bo, __entry->size, __entry->from)
);

TRACE_EVENT(vgem_p2p_invalidate,
	TP_PROTO(struct vgem_p2p_object *bo, unsigned int nr_maps),
	TP_ARGS(bo, nr_maps),
	TP_STRUCT__entry(
		__field(const void *, bo)
		__field(unsigned int, nr_maps)
	),
	TP_fast_assign(
		__entry->bo = bo;
		__entry->nr_maps = nr_maps;
	),
	TP_printk("bo=%p importer mappings left=%u",
		  __entry->bo, __entry->nr_maps)
);

TRACE_EVENT(vgem_p2p_move_notify,
	TP_PROTO(struct vgem_p2p_object *bo, int nr_attachments),
	TP_ARGS(bo, nr_attachments),
	TP_STRUCT__entry(
		__field(const void *, bo)
		__field(int, nr_attachments)
	),
	TP_fast_assign(
		__entry->bo = bo;
		__entry->nr_attachments = nr_attachments;
	),
	TP_printk("bo=%p dma-buf attachments=%d",
		  __entry->bo, __entry->nr_attachments)
);

TRACE_EVENT(vgem_p2p_dmabuf_unmap,
	TP_PROTO(struct vgem_p2p_object *bo, struct device *importer, u64 size),
	TP_ARGS(bo, importer, size),
	TP_STRUCT__entry(
		__field(const void *, bo)
		__string(importer, dev_name(importer))
		__field(u64, size)
	),
	TP_fast_assign(
		__entry->bo = bo;
		vgem_p2p_assign_str(importer, dev_name(importer));
		__entry->size = size;
	),
	TP_printk("bo=%p importer=%s size=%llu",
		  __entry->bo, __get_str(importer), __entry->size)
);

TRACE_EVENT(vgem_p2p_migrate,
	TP_PROTO(unsigned long start, unsigned long npages, bool to_device),
	TP_ARGS(start, npages, to_device),
	TP_STRUCT__entry(
		__field(unsigned long, start)
		__field(unsigned long, npages)
		__field(bool, to_device)
	),
	TP_fast_assign(
		__entry->start = start;
		__entry->npages = npages;
		__entry->to_device = to_device;
	),
	TP_printk("addr=0x%lx pages=%lu to %s", __entry->start,
		  __entry->npages, __entry->to_device ? "device" : "ram")
);

#endif /* _VGEM_P2P_TRACE_H_ */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE vgem_p2p_trace
#include <trace/define_trace.h>
