# fitgate - one flat GNU Makefile.
# Targets: all (default), check, deps, run, install, bench, fuzz, clean.
# User CFLAGS come last; CI adds WERROR=1.

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
SYSCONFDIR ?= /etc/slurm
DESTDIR    ?=
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
# Which Slurm the plugin is built for (a SPANK plugin loads only into the major.minor whose
# headers it was compiled with: plugin_version; docs/slurm-compat.md).  Default: the system's
# headers (Debian 12's libslurm-dev, 22.05).  SLURM_PREFIX=/opt/fitgate-slurm/26.05 (a
# tools/slurm-build.sh prefix, or any installed Slurm) or SLURM_INCLUDE=DIR picks another
# release's headers; its major.minor then names the build directory, build/slurm-26.05, so
# two releases' plugins never share objects (BUILD= on the command line still wins).
# -isystem: like /usr/include, a release's own headers are not held to our warnings (26.05's
# slurm.h has unprototyped callbacks).
SLURM_PREFIX  ?=
SLURM_INCLUDE ?= $(if $(SLURM_PREFIX),$(SLURM_PREFIX)/include)
# "26.05" from slurm_version.h's SLURM_VERSION_NUMBER (0x1a0503)
SLURM_RELEASE := $(shell v=$$(awk '/define SLURM_VERSION_NUMBER/ {print $$3}' \
	$(or $(SLURM_INCLUDE),/usr/include)/slurm/slurm_version.h 2>/dev/null); \
	[ -n "$$v" ] && printf '%d.%02d' $$((v >> 16)) $$(((v >> 8) & 255)))
# Where Slurm loads plugins from: SLURM_PREFIX/lib/slurm, else slurm.pc's libdir/slurm
# (SchedMD's builds), else Debian's /usr/lib/<multiarch>/slurm-wlm, else $(LIBDIR)/slurm.  The
# plugstack snippet names the installed path, so any directory works; this one is where Slurm
# sites expect it.
ifeq ($(origin SLURM_PLUGINDIR),undefined)
ifneq ($(SLURM_PREFIX),)
SLURM_PLUGINDIR := $(SLURM_PREFIX)/lib/slurm
else
SLURM_PLUGINDIR := $(shell d=$$(pkg-config --variable=libdir slurm 2>/dev/null); \
	m=$$($(CC) -print-multiarch 2>/dev/null); \
	if [ -n "$$d" ]; then echo "$$d/slurm"; \
	elif [ -n "$$m" ] && [ -d "/usr/lib/$$m/slurm-wlm" ]; then echo "/usr/lib/$$m/slurm-wlm"; \
	else echo "$(LIBDIR)/slurm"; fi)
endif
endif

CC       ?= cc
PKGS     := libcjson libcurl hwloc yaml-0.1
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wformat=2 -Wno-format-nonliteral
ifeq ($(WERROR),1)
WARN     += -Werror
endif
SAN_FLAGS :=
ifneq ($(SANITIZE),)
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
# Hardening, as debian/rules' hardening=+all gives a package, for every build: stack
# protector, glibc's checked string functions (where the user's CFLAGS / CPPFLAGS do not
# pick a level, and not under a sanitizer, which replaces those functions), and a read-only
# GOT bound at load (-z relro -z now: the plugins' Slurm symbols resolve when dlopen'ed).
HARDEN_CFLAGS := -fstack-protector-strong $(if $(SAN_FLAGS)$(findstring _FORTIFY_SOURCE,$(CFLAGS) \
	$(CPPFLAGS)),,-D_FORTIFY_SOURCE=2)
override LDFLAGS += -Wl,-z,relro -Wl,-z,now
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g -fPIC $(WARN) $(SAN_FLAGS) $(HARDEN_CFLAGS) -Iengine -Ipolicies -Icli \
	$(if $(SLURM_INCLUDE),-isystem $(SLURM_INCLUDE)) -MMD -MP
PKG_CFLAGS  = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# Linked: cJSON only.  libcurl, hwloc and libyaml are dlopen'ed when first needed
# (engine/source/hub.c on the first hub request, engine/hw/detect.c on the first GPU detection,
# engine/job/jobfile.c on the first YAML --ft-config): their headers are used,
# their ~35 shared objects are not loaded by every CLI run and tagged sbatch.  -ldl for
# glibc < 2.34 (from 2.34 dlopen is in libc and libdl.a is empty: nothing is added).
PKG_LIBS    = $(shell pkg-config --libs libcjson 2>/dev/null) -ldl -pthread
# test_detect builds topologies with hwloc itself
HWLOC_LIBS  = $(shell pkg-config --libs hwloc 2>/dev/null)
ALL_CFLAGS  = $(BASE_CFLAGS) -I$(BUILD)/gen $(PKG_CFLAGS) $(CFLAGS)
LDLIBS_ALL  = $(PKG_LIBS) -lm $(SAN_FLAGS) $(LDFLAGS)

# (only a command-line BUILD= wins, as before: an environment variable BUILD does not)
ifneq ($(origin BUILD),command line)
BUILD := build$(if $(SLURM_INCLUDE),/slurm-$(or $(SLURM_RELEASE),unknown))
endif

# The training estimate's stages, one file each, in the order engine/memory/stages.def runs
# them (its FG_TRAIN_STAGE(name, ...) rows name engine/memory/train_<name>.c).
MEMORY_STAGE_SRCS := $(patsubst %,engine/memory/train_%.c,$(shell sed -n \
	's/^FG_TRAIN_STAGE.\([a-z_0-9]*\),.*/\1/p' engine/memory/stages.def))

# --- engine: libfitgate.a -------------------------------------------------
# engine/ by what it knows (docs/design.md "Layout"): util/ <- source/ <- the model <- arch/;
# hw/ beside them; the estimator and the planner at the top.
ENGINE_SRCS := \
	engine/util/error.c \
	engine/util/fileio.c \
	engine/util/log.c \
	engine/util/fmt.c \
	engine/util/jsonscan.c \
	engine/source/config.c \
	engine/source/config_forms.c \
	engine/source/config_class.c \
	engine/source/cache.c \
	engine/source/source.c \
	engine/source/source_opts.c \
	engine/source/hub.c \
	engine/source/safetensors.c \
	engine/source/wquant.c \
	engine/source/ckpt.c \
	engine/source/st_layout.c \
	engine/arch/graph.c \
	engine/arch/blocks.c \
	engine/arch/decoder/llama_rows.c \
	engine/arch/moe/moe_mla.c \
	engine/arch/moe/moe_rows.c \
	engine/arch/decoder/gpt2_bloom_falcon.c \
	engine/arch/encoder/bert_family.c \
	engine/arch/encdec/bart_t5_whisper.c \
	engine/arch/encoder/nomic_bert.c \
	engine/arch/encoder/eurobert_jina.c \
	engine/arch/hybrid/nemotron_h_lfm2_qwen3_next.c \
	engine/arch/hybrid/bamba_falcon_h1.c \
	engine/arch/vision/multimodal.c \
	engine/arch/vision/multimodal_proj.c \
	engine/arch/moe/llama4.c \
	engine/arch/moe/deepseek_v4.c \
	engine/arch/moe/step3p7.c \
	engine/arch/moe/minimax_m3.c \
	engine/arch/generic.c \
	engine/arch/keys.c \
	engine/arch/families.c \
	engine/arch/decoder/gpt_neox_opt_mpt.c \
	engine/arch/encoder/xlnet_xlm_funnel.c \
	engine/arch/encoder/tapas_luke_fnet.c \
	engine/arch/encoder/efficient_attention.c \
	engine/arch/encdec/marian_pegasus.c \
	engine/arch/decoder/fairseq_decoders.c \
	engine/arch/vision/florence_git_fuyu.c \
	engine/arch/vision/mllama.c \
	engine/arch/tensors.c \
	engine/arch/encoder/bert_variants.c \
	engine/arch/encoder/esm_roformer_convbert.c \
	engine/arch/hybrid/mamba_jamba.c \
	engine/arch/hybrid/ssm.c \
	engine/arch/hybrid/zamba.c \
	engine/arch/hybrid/rwkv_xlstm_recurrent_gemma.c \
	engine/arch/hybrid/gemma3n.c \
	engine/arch/hybrid/blt.c \
	engine/arch/vision/chameleon_emu3.c \
	engine/arch/vision/ernie4_5_vl.c \
	engine/arch/vision/minicpmv4_6.c \
	engine/arch/vision/llava.c \
	engine/arch/vision/glm4v.c \
	engine/arch/vision/blip.c \
	engine/arch/vision/aria.c \
	engine/arch/vision/deepseek_vl.c \
	engine/arch/vision/kosmos2.c \
	engine/arch/vision/idefics.c \
	engine/arch/vision/janus.c \
	engine/arch/vision/phi4mm.c \
	engine/arch/vision/ovis2.c \
	engine/arch/vision/evolla.c \
	engine/arch/vision/gemma4.c \
	engine/arch/vision/fast_vlm.c \
	engine/arch/vision/llava_proj.c \
	engine/arch/moe/dbrx_jetmoe_minimax.c \
	engine/arch/moe/afmoe_longcat_doge.c \
	engine/hw/gpu.c \
	engine/hw/gpu_find.c \
	engine/hw/detect.c \
	engine/hw/visible.c \
	engine/hw/nvml.c \
	engine/model/model.c \
	engine/model/model_load.c \
	engine/job/job.c \
	engine/memory/memory_node.c \
	engine/memory/memory_stage.c \
	engine/memory/lines.c \
	engine/memory/pipeline.c \
	$(MEMORY_STAGE_SRCS) \
	engine/memory/loss.c \
	engine/memory/serve.c \
	engine/memory/memory_flops.c \
	engine/memory/estimate.c \
	engine/memory/memory_rl.c \
	engine/memory/serve_engine.c \
	engine/memory/titan.c \
	engine/stack/trainer.c \
	engine/stack/framework.c \
	engine/job/jobspec.c \
	engine/job/jobfile.c \
	engine/job/jobfile_rows.c \
	engine/job/jobfile_rows_launch.c \
	engine/job/jobfile_detect.c \
	engine/job/jobfile_edit.c \
	engine/job/jobfile_apply.c \
	engine/plan/fit.c \
	engine/plan/plan.c \
	engine/plan/plan_search.c \
	engine/plan/plan_env.c \
	engine/plan/plan_floor.c \
	engine/plan/plan_even.c \
	engine/memory/calib.c

# --- policies --------------------------------------------------------------
POLICY_SRCS := \
	policies/policy.c \
	policies/policy_file.c \
	policies/request.c \
	policies/assess_layout.c \
	policies/assess_serve.c \
	policies/assess.c \
	policies/decide.c \
	policies/decide_gen.c \
	policies/decide_remedy.c \
	policies/remedy_switch.c \
	policies/remedy.c \
	policies/remedy_file.c \
	policies/gate.c \
	policies/audit.c \
	policies/sacct.c

# --- SPANK plugin: spank_fitgate.so (thin: options + dispatch, exports only slurm_spank_* /
# plugin_*, links nothing but libdl) and fitgate_engine.so beside it, dlopen'ed only for jobs
# tagged with --ft-model (so untagged jobs do not load libcurl / hwloc / cJSON)
PLUGIN_SRCS := \
	plugin/fitgate_dispatch.c \
	plugin/fitgate_options.c
PLUGIN_ENGINE_SRCS := \
	plugin/fitgate_common.c \
	plugin/fitgate_alloc.c \
	plugin/fitgate_record.c \
	plugin/fitgate_stepd.c

# --- cli ------------------------------------------------------------------
CLI_SRCS := \
	cli/main.c \
	cli/cmd_plan.c \
	cli/job_line.c \
	cli/commands.c \
	cli/cmd_frameworks.c \
	cli/model_arg.c \
	cli/cmd_gpus.c \
	cli/cmd_families.c \
	cli/cmd_verify.c \
	cli/cmd_report.c \
	cli/cmd_learn.c \
	cli/learn_data.c \
	cli/learnrec.c \
	cli/cmd_ctld.c \
	cli/ctld_args.c \
	cli/ctld_mounts.c \
	cli/lint.c \
	cli/jobopts.c \
	cli/format.c \
	cli/plan_json.c \
	cli/remedy_edits.c \
	cli/report_html.c \
	cli/report_charts.c \
	cli/html.c \
	cli/auditlog.c

# --- tests (one per module; each is its own cmocka binary) ----------------
TEST_SRCS := \
	tests/test_config.c \
	tests/test_fmt.c \
	tests/test_format.c \
	tests/test_model.c \
	tests/test_arch_decoder.c \
	tests/test_arch_encoder.c \
	tests/test_arch_moe.c \
	tests/test_arch_blocks.c \
	tests/test_arch_hybrid.c \
	tests/test_arch_legacy.c \
	tests/test_arch_families.c \
	tests/test_arch_classic.c \
	tests/test_arch_bert_variants.c \
	tests/test_arch_encoder_families.c \
	tests/test_arch_seq.c \
	tests/test_arch_ssm.c \
	tests/test_arch_vl.c \
	tests/test_arch_vl_ernie_minicpm.c \
	tests/test_arch_gemma4.c \
	tests/test_arch_moe_families.c \
	tests/test_arch_moe_mla_rows.c \
	tests/test_arch_generic.c \
	tests/test_arch_keys.c \
	tests/test_model_load.c \
	tests/test_params.c \
	tests/test_source.c \
	tests/test_st_layout.c \
	tests/test_arch_tensors.c \
	tests/test_memory.c \
	tests/test_wquant.c \
	tests/test_memory_train.c \
	tests/test_loss.c \
	tests/test_serve_engine.c \
	tests/test_plan.c \
	tests/test_plan_search.c \
	tests/test_gpu.c \
	tests/test_detect.c \
	tests/test_policy.c \
	tests/test_request.c \
	tests/test_remedy.c \
	tests/test_remedy_sweep.c \
	tests/test_audit.c \
	tests/test_sacct.c \
	tests/test_calib.c \
	tests/test_learn.c \
	tests/test_learnrec.c \
	tests/test_nvml.c \
	tests/test_report_html.c \
	tests/test_man.c \
	tests/test_plugin.c \
	tests/test_jobspec.c \
	tests/test_trainer.c \
	tests/test_jobfile.c \
	tests/test_badinput.c \
	tests/test_accuracy.c

ENGINE_OBJS := $(ENGINE_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/gpus_table.o $(BUILD)/gen/real_configs.o \
	$(BUILD)/gen/config_classes.o
POLICY_OBJS := $(POLICY_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS    := $(CLI_SRCS:%.c=$(BUILD)/%.o)
PLUGIN_OBJS := $(PLUGIN_SRCS:%.c=$(BUILD)/%.o)
PLUGIN_ENGINE_OBJS := $(PLUGIN_ENGINE_SRCS:%.c=$(BUILD)/%.o)
PLUGIN      := $(BUILD)/spank_fitgate.so
PLUGIN_ENGINE := $(BUILD)/fitgate_engine.so
TEST_BINS   := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
# The accuracy core (tests/accuracy/accuracy.c), compiled once and linked into its two front
# ends: tools/accuracy.c (make accuracy) and the gate, tests/test_accuracy.c.
ACCURACY_OBJ := $(BUILD)/tests/accuracy/accuracy.o
LIB         := $(BUILD)/libfitgate.a
CLI         := $(BUILD)/fitgate

.PHONY: all check unit integration deps run install uninstall clean bench fuzz
all: $(LIB) $(CLI) $(PLUGIN) $(PLUGIN_ENGINE)

# Every object waits for the generated headers (engine/job/jobopts.def includes
# framework_names.h); their rules below compile only what they need themselves.
GEN_HEADERS := $(BUILD)/gen/framework_names.h
$(BUILD)/%.o: %.c | $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The framework names jobopts.def's --framework help quotes, from engine/stack/framework.c's table
# (tools/gen_names.c): the thin plugin, which links no engine code, shows them in sbatch --help.
GEN_NAMES := $(BUILD)/tools/gen_names
$(GEN_NAMES): tools/gen_names.c engine/stack/framework.c engine/stack/framework.h \
		engine/stack/trainer.c engine/util/error.c engine/util/fmt.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MF $@.d -o $@ tools/gen_names.c engine/stack/framework.c \
	  engine/stack/trainer.c engine/util/error.c engine/util/fmt.c \
	  $(SAN_FLAGS) $(LDFLAGS)
$(BUILD)/gen/framework_names.h: $(GEN_NAMES)
	@mkdir -p $(dir $@)
	$(GEN_NAMES) > $@.tmp && { cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@; }

# The built-in GPU table: conf/gpus.conf read at build time by engine/hw/gpu.c's own reader
# (tools/gen_gpus.c) and compiled in as the parsed table, so no process parses it (0.71 M
# instructions per tagged sbatch and CLI run before).  The generator runs on the build host.
GEN_GPUS := $(BUILD)/tools/gen_gpus
$(GEN_GPUS): tools/gen_gpus.c engine/hw/gpu_table.h $(BUILD)/engine/hw/gpu.o $(BUILD)/engine/util/fileio.o \
		$(BUILD)/engine/util/error.o $(BUILD)/engine/util/fmt.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ tools/gen_gpus.c $(filter %.o,$^) $(SAN_FLAGS) $(LDFLAGS)
$(BUILD)/gen/gpus_table.c: conf/gpus.conf $(GEN_GPUS)
	@mkdir -p $(dir $@)
	$(GEN_GPUS) conf/gpus.conf > $@.tmp && mv $@.tmp $@

# The model types tested on a real config.json ('fitgate families'), from the fixture folders
# themselves (tools/gen_real_configs.c): a folder added or removed changes the list.
GEN_REAL := $(BUILD)/tools/gen_real_configs
REAL_CONFIGS := $(sort $(wildcard tests/fixtures/models/*/config.json))
# the reader types, for a config.json that names none (its folder's name then says it)
READER_DEFS := $(sort $(wildcard engine/arch/*/*.def))
$(GEN_REAL): tools/gen_real_configs.c engine/util/jsonscan.c engine/util/classtype.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ tools/gen_real_configs.c engine/util/jsonscan.c $(SAN_FLAGS) \
	    $(LDFLAGS) -lcjson
# (tests/fixtures/models itself: its time changes when a folder is added or removed)
$(BUILD)/gen/real_configs.c: $(GEN_REAL) $(READER_DEFS) $(REAL_CONFIGS) \
    $(wildcard tests/fixtures/models/*/PROVENANCE.txt) tests/fixtures/models
	@mkdir -p $(dir $@)
	$(GEN_REAL) $(READER_DEFS) $(REAL_CONFIGS) > $@.tmp && mv $@.tmp $@

# The transformers config classes (source/config_classes.h): the vendored data
# engine/source/config_classes.tsv (tools/gen_config_classes.py's output) made a C table at
# build time (tools/gen_config_table.c), so the repository keeps the data as data.
GEN_CLASSES := $(BUILD)/tools/gen_config_table
$(GEN_CLASSES): tools/gen_config_table.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ tools/gen_config_table.c $(SAN_FLAGS) $(LDFLAGS)
$(BUILD)/gen/config_classes.c: engine/source/config_classes.tsv $(GEN_CLASSES)
	@mkdir -p $(dir $@)
	$(GEN_CLASSES) engine/source/config_classes.tsv > $@.tmp && mv $@.tmp $@

# The lists users read, generated from engine/job/jobopts.def and the framework and policy key
# tables by the engine itself (tools/gen_lists.c): sections between BEGIN / END GENERATED
# markers in the files below.  They are committed (admins copy job_submit.lua, docs/ is read in the tree,
# packaging installs the man pages and completion as they are) and `make unit` fails with
# "run make lists" when one is stale, as curl's test 1139 holds its man page to its table.
GEN_LISTS := $(BUILD)/tools/gen_lists
LIST_FILES := man/fitgate.1 man/spank_fitgate.8 man/fitgate.conf.5 contrib/bash-completion/fitgate \
	contrib/job_submit.lua docs/cli.md
$(GEN_LISTS): $(BUILD)/tools/gen_lists.o $(BUILD)/cli/jobopts.o $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $(filter %.o,$^) $(LIB) $(LDLIBS_ALL)
.PHONY: lists lists-check
lists: $(GEN_LISTS)
	$(GEN_LISTS) $(LIST_FILES)
lists-check: $(GEN_LISTS)
	$(GEN_LISTS) --check $(LIST_FILES)

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(ENGINE_OBJS) $(POLICY_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(CLI): $(CLI_OBJS) $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDLIBS_ALL)

$(PLUGIN): $(PLUGIN_OBJS) plugin/fitgate.lds
	$(CC) $(ALL_CFLAGS) -shared -o $@ $(PLUGIN_OBJS) -ldl $(SAN_FLAGS) $(LDFLAGS) \
	  -Wl,--version-script=plugin/fitgate.lds

$(PLUGIN_ENGINE): $(PLUGIN_ENGINE_OBJS) $(LIB) plugin/fitgate_engine.lds
	$(CC) $(ALL_CFLAGS) -shared -o $@ $(PLUGIN_ENGINE_OBJS) $(LIB) $(LDLIBS_ALL) -ldl \
	  -Wl,--version-script=plugin/fitgate_engine.lds

# The plugin's engine part without Slurm: the test binary exports the symbols sbatch would
# (opt, slurm_option_get/set) for the plugin's dlsym probe, hence -rdynamic.
# It also links the CLI's check (all but main.c), to hold the two to one verdict.
TEST_CLI_OBJS := $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJS))
$(BUILD)/tests/test_plugin: $(BUILD)/tests/test_plugin.o $(PLUGIN_ENGINE_OBJS) $(TEST_CLI_OBJS) \
		$(LIB)
	$(CC) $(ALL_CFLAGS) -rdynamic -o $@ $< $(PLUGIN_ENGINE_OBJS) $(TEST_CLI_OBJS) $(LIB) \
	  $(LDLIBS_ALL) -lcmocka

# fitgate learn end to end on its fixtures: the CLI's objects, as test_plugin links them.
$(BUILD)/tests/test_learnrec: $(BUILD)/tests/test_learnrec.o $(BUILD)/cli/learnrec.o $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/cli/learnrec.o $(LIB) $(LDLIBS_ALL) -lcmocka
$(BUILD)/tests/test_learn: $(BUILD)/tests/test_learn.o $(TEST_CLI_OBJS) $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(TEST_CLI_OBJS) $(LIB) $(LDLIBS_ALL) -lcmocka

# A libnvidia-ml.so.1 serving scripted figures (tests/fake_nvml.c) for the NVML sampler.
FAKE_NVML := $(BUILD)/tests/fake-nvml/libnvidia-ml.so.1
$(FAKE_NVML): tests/fake_nvml.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $<
$(BUILD)/tests/test_nvml $(BUILD)/tests/test_plugin: $(FAKE_NVML)
$(BUILD)/tests/test_nvml.o $(BUILD)/tests/test_plugin.o: ALL_CFLAGS += -DFG_FAKE_NVML='"$(FAKE_NVML)"'

$(BUILD)/tests/test_detect: TEST_LIBS = $(HWLOC_LIBS)
$(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDLIBS_ALL) $(TEST_LIBS) -lcmocka

$(BUILD)/tests/test_accuracy: $(BUILD)/tests/test_accuracy.o $(ACCURACY_OBJ) $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $(filter %.o,$^) $(LIB) $(LDLIBS_ALL) -lcmocka

# The CLI's output sink (cli/format.c) and the objects it needs.
$(BUILD)/tests/test_format: $(BUILD)/tests/test_format.o $(BUILD)/cli/format.o $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $(filter %.o,$^) $(LIB) $(LDLIBS_ALL) -lcmocka

# The HTML report lives in the CLI; its test links the CLI objects it needs.
$(BUILD)/tests/test_report_html: $(BUILD)/tests/test_report_html.o $(BUILD)/cli/report_html.o \
		$(BUILD)/cli/report_charts.o \
		$(BUILD)/cli/jobopts.o $(BUILD)/cli/format.o $(BUILD)/cli/html.o $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $(filter %.o,$^) $(LIB) $(LDLIBS_ALL) -lcmocka

# Debian packages the build and the tests need.
DEB_DEPS := gcc make pkg-config libcjson-dev libcurl4-openssl-dev libhwloc-dev libyaml-dev libcmocka-dev \
	libslurm-dev hwloc lighttpd lighttpd-mod-openssl openssl clang libclang-rt-14-dev valgrind \
	fuse3 libfuse3-dev
deps:
	@missing=""; for p in $(DEB_DEPS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

# Unit tests: each binary runs with the repository root as cwd.
# umask 022: the policies and GPU tables the tests write are refused when others may write
# them (fileio.h fg__site_file_check), whatever umask the shell running make has.
unit: $(TEST_BINS) $(CLI) $(GEN_LISTS)
	@umask 022; fail=0; for t in $(TEST_BINS); do \
	  echo "== $$t"; $$t || fail=1; \
	done; \
	echo "== $(GEN_LISTS) --check"; $(GEN_LISTS) --check $(LIST_FILES) || fail=1; \
	exit $$fail

# The estimator against measured peaks: per-row table, summary, build/accuracy.tsv
# (tests/accuracy/README.md).  The gate on the same numbers is tests/test_accuracy.c.
# The sixth calibration run's halves, once committed (tests/calibration/README.md, "Sixth run").
.PHONY: accuracy
ACCURACY := $(BUILD)/tools/accuracy
CALIB_S6 := $(wildcard tests/calibration/measured-h200-s6*.tsv)
$(ACCURACY): $(BUILD)/tools/accuracy.o $(ACCURACY_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $(filter %.o,$^) $(LIB) $(LDLIBS_ALL)
accuracy: $(ACCURACY)
	$(ACCURACY)
	@echo
	$(ACCURACY) --calib tests/calibration/measured-h200.tsv tests/accuracy/h200-unscored.tsv h200
	@echo
	$(ACCURACY) --calib tests/calibration/measured-h200-heldout.tsv /dev/null h200 \
		$(BUILD)/accuracy-heldout.tsv
	@set -e; for f in $(CALIB_S6); do \
	  echo; echo "$(ACCURACY) --calib $$f /dev/null h200"; \
	  $(ACCURACY) --calib $$f /dev/null h200 $(BUILD)/accuracy-$${f##*/}; \
	done

# Benchmarks (not timed tests): estimator throughput in-process, whole-process time and peak
# memory of the CLI, the plugin's admission overhead on the loopback Slurm cluster (as root).
# tools/bench.sh writes build/bench.txt; bench/RESULTS.md has the analysed figures.
BENCH_BINS := $(BUILD)/bench/bench_plan $(BUILD)/bench/bench_exec $(BUILD)/bench/bench_dlopen \
	$(BUILD)/bench/fitgate_engine_lean.so $(BUILD)/bench/fitgate_lean \
	$(BUILD)/bench/bench_sampler $(FAKE_NVML)
$(BUILD)/bench/bench_plan: bench/bench_plan.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDLIBS_ALL)
$(BUILD)/bench/bench_sampler: bench/bench_sampler.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDLIBS_ALL)
$(BUILD)/bench/bench_exec: tools/bench_exec.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $<
$(BUILD)/bench/bench_dlopen: tools/bench_dlopen.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -ldl
# an experiment (bench/lean_stubs.c): the plugin's engine part without libcurl and hwloc
LEAN_OBJS := $(filter-out $(BUILD)/engine/source/hub.o $(BUILD)/engine/hw/detect.o,$(ENGINE_OBJS)) \
	$(POLICY_OBJS)
$(BUILD)/bench/fitgate_engine_lean.so: $(BUILD)/bench/lean_stubs.o $(PLUGIN_ENGINE_OBJS) \
		$(LEAN_OBJS) plugin/fitgate_engine.lds
	$(CC) $(ALL_CFLAGS) -shared -o $@ $(filter %.o,$^) -Wl,--as-needed $(LDLIBS_ALL) -ldl \
	  -Wl,--version-script=plugin/fitgate_engine.lds
# the same experiment for the CLI (its hub and gpus commands fail; plan works)
$(BUILD)/bench/fitgate_lean: $(CLI_OBJS) $(BUILD)/bench/lean_stubs.o $(LEAN_OBJS)
	$(CC) $(ALL_CFLAGS) -o $@ $(filter %.o,$^) -Wl,--as-needed $(LDLIBS_ALL)
bench: all $(BENCH_BINS)
	bash tools/bench.sh

# Fuzzing (tests/fuzz/run.sh): libFuzzer targets built with clang and ASan+UBSan in build/fuzz
# (apart from the normal build), seeded from the fixtures, each run FUZZ_SECONDS; inputs that
# once crashed (tests/fuzz/regress) are replayed first.  CI runs 10 s each with FUZZ_SEED=1.
FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/run.sh

# Integration tests (real servers, real Slurm) are shell scripts under tests/integration.
INTEGRATION := $(sort $(wildcard tests/integration/*.sh))
integration: all
	@umask 022; fail=0; for s in $(INTEGRATION); do \
	  echo "== $$s"; bash $$s || fail=1; \
	done; exit $$fail

check: deps
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) integration

# A throwaway single-host Slurm cluster with fake GPUs and the plugin (tools/demo.sh):
# three jobs (fits, rejected with the request that would fit, resized and run) and the
# audit report; it stays up under /tmp/fitgate-demo until `make demo-down`.  Root.
.PHONY: demo demo-down
demo:
	bash tools/demo.sh up
demo-down:
	bash tools/demo.sh down

# The main job for a newcomer: a plan for a model from the shipped examples.
run: deps
	$(MAKE) all
	$(CLI) plan tests/fixtures/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2 --gpu h200 --structure

# install: the CLI under PREFIX (not libfitgate.a: its headers are private and its API not
# promised, docs/design.md "libfitgate"), the plugin (and its engine part beside it) in Slurm's plugin
# directory, man pages, bash completion, and the configuration in Slurm's directory:
# fitgate.conf, gpus.conf and plugstack.conf.d/fitgate.conf.  That snippet only includes
# $(DATADIR)/fitgate/plugstack.conf, the `required` line with the installed paths, which goes
# away with the plugin: an uninstalled (or removed, not purged) plugin never leaves Slurm a
# required line for a missing .so, which would stop every sbatch and srun.  An admin who needs
# other plugin arguments replaces the include with their own line.
# Pristine copies of the three files go to $(DATADIR)/fitgate/etc; a file an admin has edited
# (it differs from the previous pristine copy) is kept, the shipped one written as FILE.new.
CONF_STAGE := $(BUILD)/install
INSTALLED_CONF := fitgate.conf gpus.conf plugstack.conf.d/fitgate.conf
define install_conf
	@live="$(DESTDIR)$(SYSCONFDIR)/$(1)"; old="$(DESTDIR)$(DATADIR)/fitgate/etc/$(1)"; \
	new="$(CONF_STAGE)/$(1)"; \
	if [ ! -e "$$live" ] || cmp -s "$$live" "$$new" || \
	   { [ -e "$$old" ] && cmp -s "$$live" "$$old"; }; then \
	  echo "install -m 0644 $$new $$live"; install -m 0644 "$$new" "$$live"; \
	else \
	  install -m 0644 "$$new" "$$live.new"; \
	  echo "install: kept the edited $$live; the shipped one is $$live.new"; \
	fi; \
	install -D -m 0644 "$$new" "$$old"
endef
PATHS_SED := -e 's|[^ ]*/spank_fitgate\.so|$(SLURM_PLUGINDIR)/spank_fitgate.so|g' \
	-e 's|/etc/slurm/|$(SYSCONFDIR)/|g'

install: all lists-check
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SLURM_PLUGINDIR) \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
	  $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(SYSCONFDIR)/plugstack.conf.d \
	  $(DESTDIR)$(DATADIR)/fitgate/etc/plugstack.conf.d
	install -m 0755 $(CLI) $(DESTDIR)$(BINDIR)/fitgate
	install -m 0755 $(PLUGIN) $(DESTDIR)$(SLURM_PLUGINDIR)/spank_fitgate.so
	install -m 0755 $(PLUGIN_ENGINE) $(DESTDIR)$(SLURM_PLUGINDIR)/fitgate_engine.so
	install -m 0644 man/fitgate.1 $(DESTDIR)$(MANDIR)/man1/fitgate.1
	install -m 0644 man/fitgate.conf.5 $(DESTDIR)$(MANDIR)/man5/fitgate.conf.5
	install -m 0644 man/spank_fitgate.8 $(DESTDIR)$(MANDIR)/man8/spank_fitgate.8
	install -m 0644 contrib/bash-completion/fitgate $(DESTDIR)$(BASHCOMPDIR)/fitgate
	@rm -rf $(CONF_STAGE) && mkdir -p $(CONF_STAGE)/plugstack.conf.d
	sed $(PATHS_SED) conf/plugstack.conf.d/fitgate.conf > $(CONF_STAGE)/plugstack.conf
	install -m 0644 $(CONF_STAGE)/plugstack.conf $(DESTDIR)$(DATADIR)/fitgate/plugstack.conf
	sed $(PATHS_SED) conf/fitgate.conf > $(CONF_STAGE)/fitgate.conf
	cp conf/gpus.conf $(CONF_STAGE)/gpus.conf
	@{ echo "# fitgate: GPU-memory admission for jobs tagged --ft-model=ID --ft-mode=MODE."; \
	  echo "# The plugin's line lives with the plugin, in $(DATADIR)/fitgate/plugstack.conf:"; \
	  echo "# when the plugin is removed, the include finds nothing and Slurm runs on."; \
	  echo "# For other plugin arguments (topology=, engine=, a site key), replace the"; \
	  echo "# include by your own line, as in that file.  spank_fitgate(8), fitgate.conf(5)."; \
	  echo "include $(DATADIR)/fitgate/plugstack.conf"; \
	} > $(CONF_STAGE)/plugstack.conf.d/fitgate.conf
	$(call install_conf,fitgate.conf)
	$(call install_conf,gpus.conf)
	$(call install_conf,plugstack.conf.d/fitgate.conf)

# uninstall: everything install wrote, except configuration an admin has edited.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/fitgate \
	  $(DESTDIR)$(SLURM_PLUGINDIR)/spank_fitgate.so $(DESTDIR)$(SLURM_PLUGINDIR)/fitgate_engine.so \
	  $(DESTDIR)$(MANDIR)/man1/fitgate.1 $(DESTDIR)$(MANDIR)/man5/fitgate.conf.5 \
	  $(DESTDIR)$(MANDIR)/man8/spank_fitgate.8 $(DESTDIR)$(BASHCOMPDIR)/fitgate \
	  $(DESTDIR)$(DATADIR)/fitgate/plugstack.conf
	@for f in $(INSTALLED_CONF); do \
	  live="$(DESTDIR)$(SYSCONFDIR)/$$f"; old="$(DESTDIR)$(DATADIR)/fitgate/etc/$$f"; \
	  if [ -e "$$live" ] && [ -e "$$old" ] && cmp -s "$$live" "$$old"; then rm -f "$$live"; \
	  elif [ -e "$$live" ]; then echo "uninstall: kept the edited $$live"; fi; \
	  rm -f "$$live.new" "$$old"; \
	done
	-rmdir $(DESTDIR)$(DATADIR)/fitgate/etc/plugstack.conf.d $(DESTDIR)$(DATADIR)/fitgate/etc \
	  $(DESTDIR)$(DATADIR)/fitgate 2>/dev/null

clean:
	rm -rf $(BUILD)

-include $(ENGINE_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(PLUGIN_OBJS:.o=.d) $(PLUGIN_ENGINE_OBJS:.o=.d) $(POLICY_OBJS:.o=.d) $(TEST_BINS:=.d) \
	$(ACCURACY_OBJ:.o=.d) $(BUILD)/tools/accuracy.d $(BUILD)/tools/gen_lists.d
