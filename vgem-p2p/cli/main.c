// SPDX-License-Identifier: MIT
/*
 * vgem-p2p: drive the vgem-p2p exporter and the edu_nic importer from the
 * shell. Each subcommand is one complete workload: buffer objects die with
 * the DRM file and registrations with the importer file, so nothing
 * useful could outlive a process anyway.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const struct command *const commands[] = {
	&cmd_info, &cmd_alloc, &cmd_register, &cmd_dma, &cmd_move,
	&cmd_evict, &cmd_migrate, &cmd_stats,
};
#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	unsigned int i;

	fprintf(f,
		"usage: vgem-p2p [OPTIONS] COMMAND [ARGS]\n"
		"\n"
		"Drive the vgem-p2p exporter (VRAM on a PCI BAR) and the edu_nic\n"
		"importer (a NIC doing real DMA) through libvgem-p2p.\n"
		"\n"
		"Options:\n"
		"  -e, --exporter N   use the N-th vgem_p2p device (default 0)\n"
		"  -i, --importer N   use /dev/edu_nicN (default 0)\n"
		"  -j, --json         machine-readable output (one JSON object)\n"
		"  -p, --progress     show progress of long work on stderr\n"
		"                     (default: on when stderr is a terminal)\n"
		"  -q, --quiet        no progress\n"
		"      --dry-run      check the command's arguments and print the\n"
		"                     settings it would run with; open no device\n"
		"  -V, --version      print the version\n"
		"  -h, --help         this help; COMMAND --help for a command's own\n"
		"The long forms may also follow the command. --progress and\n"
		"--quiet conflict.\n"
		"\n"
		"Commands:\n");
	for (i = 0; i < NR_COMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i]->name,
			commands[i]->summary);
	fprintf(f,
		"\n"
		"Exit status: 0 success, 1 failure (one line on stderr), 2 bad usage.\n"
		"With --json, an error is also in the JSON on stdout: \"error\" (the\n"
		"message), \"errno\" (null when no call failed), \"exit\" (the status).\n"
		"See vgem-p2p(1).\n");
}

/* the global options without a short form */
#define OPT_DRY_RUN 0x100

/* --progress and --quiet, as given: together they are a usage error */
static bool seen_progress, seen_quiet;

/* Apply global option @opt; out_usage()'s status on a bad argument. */
static int set_global(struct ctx *c, int opt, const char *arg)
{
	char *end;
	long n;

	switch (opt) {
	case 'e':
	case 'i':
		n = strtol(arg, &end, 10);
		if (!*arg || *end || n < 0 || n > INT_MAX)
			return out_usage("bad %s '%s' (a device index, 0 or more)",
					 opt == 'e' ? "--exporter" :
					 "--importer", arg);
		if (opt == 'e')
			c->exporter = n;
		else
			c->importer = n;
		return 0;
	case 'j':
		out_json = true;
		return 0;
	case 'p':
	case 'q':
		if (opt == 'p')
			seen_progress = true;
		else
			seen_quiet = true;
		if (seen_progress && seen_quiet)
			return out_usage("--progress and --quiet conflict");
		out_progress = opt == 'p';
		return 0;
	case OPT_DRY_RUN:
		cli_dry_run = true;
		return 0;
	}
	return 2;
}

/*
 * Global options in their long form may also follow the command
 * ("vgem-p2p dma --json"): take them out of the command's arguments, up
 * to a "--". No command has a long option of the same name; short ones
 * stay the command's, since -i or -p may mean something else there.
 */
static int hoist_globals(struct ctx *c, int *argc, char **argv)
{
	static const struct { const char *name; int opt; bool arg; } g[] = {
		{ "--exporter", 'e', true }, { "--importer", 'i', true },
		{ "--json", 'j', false }, { "--progress", 'p', false },
		{ "--quiet", 'q', false }, { "--dry-run", OPT_DRY_RUN, false },
	};
	int i, j, k, ret;

	for (i = 1; i < *argc && strcmp(argv[i], "--"); ) {
		const char *arg = NULL;
		size_t len;
		int used = 1;

		for (k = 0; k < (int)(sizeof(g) / sizeof(g[0])); k++) {
			len = strlen(g[k].name);
			if (strncmp(argv[i], g[k].name, len))
				continue;
			if (argv[i][len] == '=' && g[k].arg)
				arg = argv[i] + len + 1;
			else if (argv[i][len])
				continue;
			break;
		}
		if (k == (int)(sizeof(g) / sizeof(g[0]))) {
			i++;
			continue;
		}
		if (g[k].arg && !arg) {
			if (i + 1 >= *argc)
				return out_usage("option '%s' requires an argument",
						 g[k].name);
			arg = argv[i + 1];
			used = 2;
		}
		ret = set_global(c, g[k].opt, arg);
		if (ret)
			return ret;
		for (j = i; j + used <= *argc; j++)
			argv[j] = argv[j + used];
		*argc -= used;
	}
	return 0;
}

/*
 * --json before anything can fail, so that an error in the options that
 * come before it is reported as JSON too: "--json" anywhere up to "--"
 * (hoist_globals() takes it there), "-j" among the global options.
 */
static void prescan_json(int argc, char **argv)
{
	bool global = true;
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--json") ||
		    (global && !strcmp(argv[i], "-j")))
			out_json = true;
		if (argv[i][0] != '-')
			global = false;
	}
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "exporter", required_argument, NULL, 'e' },
		{ "importer", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "progress", no_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct ctx c = { .efd = -1, .ifd = -1 };
	unsigned int i;
	int opt, ret, first, cargc;

	out_progress = isatty(STDERR_FILENO);
	opterr = 0;
	/*
	 * "+": stop at the command, whose options are its own; ":": a
	 * missing argument is told apart from an unknown option.
	 */
	while ((opt = getopt_long(argc, argv, "+:e:i:jpqVh", opts,
				  NULL)) != -1) {
		switch (opt) {
		case 'e':
		case 'i':
		case 'j':
		case 'p':
		case 'q':
		case OPT_DRY_RUN:
			ret = set_global(&c, opt, optarg);
			if (ret)
				return ret;
			break;
		case 'V':
			if (!out_json) {
				printf("vgem-p2p %s\n", vp2p_version());
				return 0;
			}
			/* out_finish() prints it */
			out_begin();
			out_str("program", "vgem-p2p");
			out_str("version", vp2p_version());
			out_end();
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return out_badopt(opt, argv);
		}
	}
	if (optind >= argc)
		return out_usage("no command");
	for (i = 0; i < NR_COMMANDS; i++) {
		if (strcmp(argv[optind], commands[i]->name))
			continue;
		out_cmd = commands[i]->name;
		if (want_help(commands[i], argc - optind, argv + optind))
			return 0;
		first = optind;
		cargc = argc - first;
		ret = hoist_globals(&c, &cargc, argv + first);
		if (ret)
			return ret;
		optind = 0;	/* glibc: 0 re-initialises getopt for argv */
		ret = commands[i]->run(&c, cargc, argv + first);
		goto out;
	}
	return out_usage("unknown command '%s'", argv[optind]);
out:
	if (c.efd >= 0)
		close(c.efd);
	if (c.ifd >= 0)
		close(c.ifd);
	return ret;
}

int main(int argc, char **argv)
{
	prescan_json(argc, argv);
	return out_finish(run(argc, argv));
}
