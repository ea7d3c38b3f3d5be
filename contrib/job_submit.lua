--[[
job_submit.lua - fitgate at the controller (Slurm job_submit/lua).

For sites that want slurmctld to enforce the GPU-memory check for every job,
whatever submitted it (sbatch, salloc, srun, slurmrestd): the SPANK plugin's
checks run in sbatch / salloc / srun, on the user's side, and REST clients
never run SPANK at all.  Jobs tagged with the plugin's options (--ft-model=ID
--ft-mode=MODE ...: slurmctld sees them in job_desc.spank_job_env as
_SLURM_SPANK_OPTION_fitgate_*) are judged by `fitgate check --policy`, the
same decision the plugin makes (allow, warn, reject, resize), with the site's
fitgate.conf and GPU table; untagged jobs are not touched.  Every --ft-*
option is passed on as it is; OPTIONS below lists them, because the job's
environment (where a REST client puts them) can only be looked up by name.
A REST job is judged like an sbatch one; an option with two values, or one
the plugin does not have, is refused (docs/plugin.md, "Every door").  An
update of a pending tagged job's GPU request, nodes or partition is judged
the same way (slurm_job_modify).

The check is offline (--offline): site model directories and the fitgate
cache only, never the hub, so slurmctld never waits on the network; a model
that is in neither follows OnError.  The SPANK plugin must still be listed
in plugstack.conf so that sbatch accepts the --ft-* options (with
action=off if only this script should act).

Install: copy next to slurm.conf as job_submit.lua, set JobSubmitPlugins=lua,
`scontrol reconfigure`.  Edit the settings below.

What runs is `fitgate ctld` (cli/cmd_ctld.c), never a shell line with the
job's text in it: the job's options are written NUL-separated to a 0600 file
of slurmctld's (os.tmpname) that becomes the check's standard input, so no
option is quoted and none meets the 128 KiB argument limit; the command line
holds only this file's settings, numbers and that file's name.  The fields
are a fixed vector: the model first (a value, never an option), then only
what a job may set (its --ft-* options, GPU request, --nodes, --partition,
its directory); fitgate ctld refuses any other field as the job's error, and
the site's files (the GPU table, calibration) come from POLICY alone.  fitgate ctld
runs the check as the submitting user with the user's supplementary groups
(a root:projgroup 0750 model directory is read as the user reads it), kills
it past TIMEOUT_MS, writes the one audit line of every outcome itself (as
slurmctld's user, into LogFile=: users never hold the trail open), and
answers in fixed lines whose fields are percent-encoded: nothing here
matches a pattern over user text.  A check that could not run is decided by
OnError= and said in slurmctld.log; an invalid policy rejects tagged jobs
(fails closed) until `fitgate check --policy FILE --lint` passes.  After a
check timed out waiting on a file system (a stalled mount: fitgate ctld names
it), tagged jobs that read that file system are decided by OnError= without a
check for STALL_S seconds, so slurmctld (and the jobs queued behind it) waits
at most TIMEOUT_MS once per STALL_S and stalled mount; jobs on other file
systems are checked as always.  A check that ran out of time computing opens
no such window: that job alone follows OnError=.
]]

local FITGATE = "/usr/local/bin/fitgate"
local POLICY = "/etc/slurm/fitgate.conf"   -- the plugin's policy: the same decision
local TIMEOUT_MS = 800        -- the check (it takes ~10 ms); slurmctld blocks meanwhile
local STALL_S = 30            -- after a check timed out on a stalled file system: no check of
                              -- jobs on that file system for this long (OnError=)
local ON_ERROR = "allow"      -- allow | reject: without a policy file, or none in it: fitgate
                              -- could not run, timed out, or found the model nowhere
local PLUGIN = "fitgate"      -- the SPANK plugin's name (prefix of its options)
local LOG_FILE = nil          -- the controller's own audit trail, beyond users' reach: a file
                              -- in a root 0755 directory ("/var/log/fitgate/controller.log")
                              -- or "syslog"; nil: the policy's LogFile=

-- slurmctld as root (SlurmUser=root) can run fitgate as the user; otherwise it runs as
-- SlurmUser, which must then be able to read the model paths users give.
local AS_ROOT = false
do
   local h = io.popen("id -u")
   if h ~= nil then
      AS_ROOT = (h:read("*l") == "0")
      h:close()
   end
end

-- A string for slurmctld.log: its control characters as \xNN (a newline in a job name
-- cannot forge a line).
local function esc(s)
   return (string.gsub(tostring(s), "[%c\127]", function(c)
      return string.format("\\x%02x", string.byte(c))
   end))
end

-- The plugin's options (engine/job/jobopts.def, '-' as '_'), one row each: slurmctld cannot
-- list a job's environment, only look names up in it.
-- BEGIN GENERATED lua-options: from engine/job/jobopts.def by tools/gen_lists.c (make lists); do not edit
local OPTIONS = {
   "model", "mode", "seq_len", "batch", "lora_rank", "lora_targets", "precision",
   "optimizer", "quant", "zero", "grad_ckpt", "gpu", "gpus", "attention", "framework", "tp",
   "pp", "ep", "cp", "dp", "offload", "unsharded_copy", "chunked_ce", "override",
   "gpu_util", "adapter", "num_generations", "max_prompt_length", "max_completion_length",
   "beta", "vllm_mode", "vllm_gpu_util", "ref_model", "gen_gpus", "kv_dtype",
   "quantization", "optimizer_in_bwd", "no_grad_ckpt", "grad_accum", "loss", "act_offload",
   "sp", "grad_reduce_dtype", "optimizer_state_dtype", "config", "ds_bucket",
   "master_dtype", "pp_schedule", "pp_microbatches", "async_tp", "reshard_after_forward",
}
local FLAGS = { grad_ckpt = true, unsharded_copy = true, chunked_ce = true, optimizer_in_bwd = true, no_grad_ckpt = true, act_offload = true, sp = true, async_tp = true }
-- END GENERATED lua-options
local KNOWN = {}
for _, o in ipairs(OPTIONS) do KNOWN["ft_" .. o] = true end

-- A flag's value means nothing (sbatch sends "" in one place and "(null)" in the other).
local function value_of(name, v)
   if FLAGS[string.sub(name, 4)] then return "" end
   return v
end

--[[ The SPANK options of the job: { ft_model = "...", ft_mode = "...", ... }, or nil and
why the job cannot be judged.  sbatch sends each option twice (plugstack.c, _option_setenv):
in job_desc.spank_job_env and in the job's environment, which is where slurmstepd reads a
batch job's options from (plugstack.c, _spank_stack_get_remote_options_env: the first entry
of that name in job->env); the plugin also reads SLURM_SPANK__SLURM_SPANK_OPTION_* there,
slurmstepd's copy of spank_job_env (fitgate_options.c, fitgate_options_from_env).  A client
that is not sbatch (a REST call: slurmrestd's v0.0.38 takes only `environment`; a program on
libslurm) writes any of these as it likes.  So the verdict is on every spelling the node
reads; a name given two values, or a name the plugin does not have, is a request sbatch
cannot make, and the job is refused whatever OnError says (OnError is for fitgate failing,
not for a forged request). ]]
local function spank_options(job_desc)
   local opts = {}
   local prefix = "_SLURM_SPANK_OPTION_" .. PLUGIN .. "_"
   local function add(name, v, where)
      v = value_of(name, v)
      if opts[name] ~= nil and opts[name][1] ~= v then
         return string.format("--%s is '%s' (%s) and '%s' (%s)", string.gsub(name, "_", "-"),
                              opts[name][1], opts[name][2], v, where)
      end
      opts[name] = { v, where }
      return nil
   end
   local env = job_desc.spank_job_env
   if env ~= nil then
      for _, kv in pairs(env) do
         local k, v = string.match(kv, "^([^=]+)=(.*)$")
         if k ~= nil and string.sub(k, 1, 6) == "SPANK_" then k = string.sub(k, 7) end
         if k ~= nil and string.sub(k, 1, #prefix) == prefix then
            local name = string.sub(k, #prefix + 1)
            if not KNOWN[name] then
               return nil, "--" .. string.gsub(name, "_", "-") .. " is not an option of fitgate"
            end
            local bad = add(name, v, "SPANK environment")
            if bad then return nil, bad end
         end
      end
   end
   local jenv = job_desc.environment
   if jenv ~= nil then
      for name in pairs(KNOWN) do
         for _, spelling in ipairs({ prefix, "SLURM_SPANK_" .. prefix }) do
            local v = jenv[spelling .. name]
            if v ~= nil then
               local bad = add(name, v, "environment " .. spelling .. name)
               if bad then return nil, bad end
            end
         end
      end
   end
   local flat = {}
   for name, vw in pairs(opts) do flat[name] = vw[1] end
   return flat
end

--[[ What sbatch's plugin decided (fitgate_alloc.c, export_one: spank_job_control_setenv)
travels in job_desc.spank_job_env as FITGATE_*; sbatch also copies every spank_job_env entry
into the job's environment as SLURM_SPANK_<entry> (sbatch.c, _set_spank_env), and that copy
is what the node reads (fitgate_stepd.c, submitted()).  A REST client writes the environment
and no spank_job_env: so the environment's copy is made to say what spank_job_env says, and
emptied where spank_job_env says nothing (an empty value is no value to the node). ]]
local PLAN_VARS = { "PLAN", "TP", "PP", "EP", "DP", "MICRO_BATCH", "GRAD_ACCUM",
                    "ESTIMATE_BYTES", "PP_SPLIT", "NEMO_OVERRIDES", "CARD", "GPUS",
                    "CONFIG_DIGEST" }
local function plan_from_submission(job_desc)
   local jenv = job_desc.environment
   if jenv == nil then return end
   local sent = {}
   for _, kv in pairs(job_desc.spank_job_env or {}) do
      local k, v = string.match(kv, "^([^=]+)=(.*)$")
      if k ~= nil then sent[k] = v end
   end
   for _, k in ipairs(PLAN_VARS) do
      local n = "SLURM_SPANK_FITGATE_" .. k
      local want = sent["FITGATE_" .. k] or ""
      local have = jenv[n]
      if have ~= nil and have ~= want then jenv[n] = want end
   end
end

--[[ The card the controller judged the job on, for the node: on a node where hwloc sizes no
GPU, slurmstepd's check takes SLURM_SPANK_FITGATE_CARD (or CARD= in ..._PLAN) as the card
(fitgate_stepd.c), and a client could have written it.  It is set here from the job's own
request: the GPU type it asked Slurm for, else its --ft-gpu (which `fitgate check` used). ]]
local function card_for_node(job_desc, card)
   local jenv = job_desc.environment
   if jenv == nil or card == nil or card == "" then return end
   if jenv["SLURM_SPANK_FITGATE_CARD"] ~= card then jenv["SLURM_SPANK_FITGATE_CARD"] = card end
   local plan = jenv["SLURM_SPANK_FITGATE_PLAN"]
   if plan ~= nil and plan ~= "" then
      local fixed = string.gsub(plan, "CARD=[^;]*", function() return "CARD=" .. card end)
      if fixed ~= plan then jenv["SLURM_SPANK_FITGATE_PLAN"] = fixed end
   end
end

--[[ The GPU request as the job spelled it: { opt = `fitgate check`'s Slurm option
("--gres=gpu:t4:1", "" when the job asks for no GPU), kind = where Slurm keeps it
("per_node", "per_job", "per_task", nil), type = the GPU type it names ("t4", nil when
untyped). ]]
local function request(job_desc)
   local per_node, per_job = job_desc.tres_per_node, job_desc.tres_per_job
   local function gpu(tres)
      if tres == nil then return nil end
      for entry in string.gmatch(tres, "[^,]+") do
         local rest = string.match(entry, "^gres[:/]gpu(.*)$") or string.match(entry, "^gpu(.*)$")
         if rest ~= nil then return (string.gsub(rest, "^[:=]", "")) end
      end
      return nil
   end
   local function type_of(g)
      return string.match(g, "^([%a][%w_.-]*):%d+$") or string.match(g, "^([%a][%w_.-]*)$")
   end
   local g = gpu(per_node)
   if g ~= nil then
      return { opt = "--gres=" .. "gpu" .. (g ~= "" and ":" .. g or ""), kind = "per_node",
               type = type_of(g) }
   end
   g = gpu(per_job)
   if g ~= nil then
      return { opt = "--gpus=" .. (g ~= "" and g or "1"), kind = "per_job", type = type_of(g) }
   end
   -- --gpus-per-task (a REST client's gpus_per_task too): the job's total, per job
   g = gpu(job_desc.tres_per_task)
   if g ~= nil then
      local gtype, each = string.match(g, "^(.-):?(%d*)$")
      local tasks = job_desc.num_tasks
      if tasks == nil or tasks < 1 or tasks >= 4294967294 then tasks = 1 end
      local total = (tonumber(each) or 1) * tasks
      return { opt = "--gpus=" .. (gtype ~= "" and gtype .. ":" or "") .. total,
               kind = "per_task", type = gtype ~= "" and gtype or nil }
   end
   return { opt = "" }
end

--[[ A resize, from `fitgate check`'s decision.request: the request after the decision in
Slurm's spelling (fg_request_spell: "--gres=gpu:t4:4", "--gres=gpu:4", "--nodes=2
--gpus-per-node=h100:8", "--gpus=t4:8"; --nodes only above one node), as the TRES that
slurmctld keeps ("gres:gpu:t4:4"): { per_node =, per_job =, gpus = the --gpus value,
nodes = }; nil when the answer names no GPU request.  Taken as fitgate spelled it, so an
untyped request stays untyped; "TYPE" is its word for a card without a gres name (a
GpuTable= row without Aliases=): no type. ]]
local function resized(req)
   if req == nil or req == "" then return nil end
   local r = {}
   for o, v in string.gmatch(req, "%-%-([%w-]+)=(%S+)") do
      if o == "gres" then
         r.per_node = "gres:" .. string.gsub(v, "^gpu:TYPE:", "gpu:")
      elseif o == "gpus-per-node" then
         r.per_node = "gres:gpu:" .. string.gsub(v, "^TYPE:", "")
      elseif o == "gpus" then
         r.gpus = string.gsub(v, "^TYPE:", "")
         r.per_job = "gres:gpu:" .. r.gpus
      elseif o == "nodes" then
         r.nodes = tonumber(v)
      end
   end
   if r.per_node == nil and r.per_job == nil then return nil end
   return r
end

-- The policy file's text, read whole (nil when there is none).
local function policy_text()
   local f = io.open(POLICY, "r")
   if f == nil then return nil end
   local t = f:read("*a")
   f:close()
   return t
end

-- OnError= of the policy file (the plugin's: fitgate_stepd.c cannot_check), else ON_ERROR;
-- only for when fitgate ctld gave no answer at all (it decides every other case itself).
local function site_on_error()
   local v = ON_ERROR
   for line in string.gmatch(policy_text() or "", "[^\n]+") do
      local w = string.match(line, "^%s*OnError%s*=%s*(%a+)")
      if w ~= nil then v = string.lower(w) end
   end
   return v
end

-- Whether the policy turns RequireTag on anywhere (site-wide or for a partition): only then
-- is an untagged GPU job shown to fitgate ctld, which applies the partition's rules.
local function require_tag_somewhere()
   local t = string.lower(policy_text() or "")
   return string.find(t, "requiretag%s*=%s*yes") ~= nil or
          string.find(t, "requiretag%s*=%s*true") ~= nil or
          string.find(t, "requiretag%s*=%s*1") ~= nil or
          string.find(t, "requiretag%s*=%s*on") ~= nil
end

-- A refusal: the user's message (sbatch prints it; slurmrestd 22.05 returns only the error
-- code, openapi/v0.0.38 _job_post), and one line in slurmctld's log for the admin.
local function refuse(job_desc, line)
   slurm.log_user("%s", line)
   slurm.log_info("fitgate: refused a job of uid %s (%s): %s", tostring(job_desc.user_id),
                  esc(job_desc.name), esc(line))
   return slurm.ERROR
end

-- fitgate ctld gave no answer (it could not run, or its own time ran out): OnError=.
local function no_answer(job_desc, what)
   slurm.log_error("fitgate: cannot check a job of uid %s (%s): %s; OnError=%s",
                   tostring(job_desc.user_id), esc(job_desc.name), esc(what), site_on_error())
   if site_on_error() == "reject" then
      return refuse(job_desc, string.format(
         "fitgate: rejected: cannot check this job: %s (OnError=reject)", what))
   end
   slurm.log_user("fitgate: warning: cannot check this job: %s; it goes on unchecked", what)
   return slurm.SUCCESS
end

-- The file systems whose check timed out lately (fitgate ctld's fitgate-stalled records,
-- kept percent-encoded as it wrote them: they go back on its command line as they are, only
-- [A-Za-z0-9._:/=,+@%-]), each with the time until which a job on it is not checked; and
-- the time until which no job is checked because fitgate ctld itself gave no answer in time.
local STALLED = {}
local STALLED_UNTIL = 0

-- fitgate ctld's answer (cli/cmd_ctld.c): fixed records, percent-encoded fields.
local function unesc(f)
   if f == "%00" then return "" end
   return (string.gsub(f, "%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end
local function read_answer(out)
   local a = { say = {}, log = {} }
   for line in string.gmatch(out, "[^\n]+") do
      local m = string.match(line, "^fitgate%-say (%S+)$")
      if m ~= nil then table.insert(a.say, unesc(m)) end
      local lv, lm = string.match(line, "^fitgate%-log (%a+) (%S+)$")
      if lv ~= nil then table.insert(a.log, { lv, unesc(lm) }) end
      local v, r = string.match(line, "^fitgate%-answer 1 (%a+) (%S+)$")
      if v ~= nil then a.verdict, a.request = v, unesc(r) end
      local mp = string.match(line, "^fitgate%-stalled ([%w._:/=,+@%%-]+)$")
      if mp ~= nil then STALLED[mp] = os.time() + STALL_S end
   end
   return a
end

-- The join key sbatch's plugin gave the job (fitgate_alloc.c export_layout: FITGATE_SUBMIT_ID
-- in spank_job_env), when it has the form fitgate writes: HOST:PID:SEC.NSEC:SEQ.
local function submit_key(job_desc)
   for _, kv in pairs(job_desc.spank_job_env or {}) do
      local v = string.match(kv, "^FITGATE_SUBMIT_ID=(.*)$")
      if v ~= nil and string.match(v, "^[%w.-]+:%d+:%d+%.%d+:%d+$") then return v end
   end
   return nil
end


--[[ One run of fitgate ctld: `args` the check's arguments (the model first), `extra` its
own flags (numbers and fixed words only).  The arguments travel in a 0600 temporary file
that is its standard input; returns read_answer's table, or nil and why. ]]
local function ctld(job, args, extra)
   local path = os.tmpname()
   local f = io.open(path, "w")
   if f == nil then return nil, "cannot write " .. path end
   for _, a in ipairs(args) do f:write(tostring(a), "\0") end
   f:close()
   -- timeout: a backstop only, for a fitgate ctld that cannot even start (it bounds the check)
   local backstop = math.ceil(TIMEOUT_MS / 1000) + 1
   local cmd = { "exec timeout -k 1", tostring(backstop), FITGATE,
                 "ctld", "--timeout-ms", tostring(TIMEOUT_MS), "--on-error", ON_ERROR }
   local pf = io.open(POLICY, "r")
   if pf ~= nil then
      pf:close()
      table.insert(cmd, "--policy")
      table.insert(cmd, POLICY)
   end
   if AS_ROOT and job.user_id ~= nil and job.user_id ~= 0 then
      table.insert(cmd, string.format("--run-as %d:%d", job.user_id, job.group_id))
   end
   if LOG_FILE ~= nil then
      table.insert(cmd, "--log-file")
      table.insert(cmd, LOG_FILE)
   end
   for _, e in ipairs(extra) do table.insert(cmd, e) end
   local t0 = os.time()
   local h = io.popen(table.concat(cmd, " ") .. " < " .. path .. " 2>/dev/null")
   if h == nil then
      os.remove(path)
      return nil, "cannot run " .. FITGATE
   end
   local out = h:read("*a") or ""
   local _, _, code = h:close()   -- Lua 5.1 (Slurm 22.05) gives no exit status: the time
   if code == nil and os.time() - t0 >= backstop then code = 124 end
   os.remove(path)
   local a = read_answer(out)
   if a.verdict == nil then
      if code == 124 or code == 137 then
         STALLED_UNTIL = os.time() + STALL_S
         return nil, "fitgate took longer than " .. backstop .. " s"
      end
      return nil, "fitgate ctld gave no answer (exit " .. tostring(code) .. ")"
   end
   for _, l in ipairs(a.log) do
      if l[1] == "error" then slurm.log_error("%s", l[2]) else slurm.log_info("%s", l[2]) end
   end
   for _, l in ipairs(a.say) do slurm.log_user("%s", l) end
   return a
end

-- Slurm's numbers for the audit line: the job id when the job asked for one, the time
-- limit (NO_VAL when --time was not given: fitgate records it as unknown).
local function job_numbers(job)
   local extra = {}
   local key = submit_key(job)
   if key ~= nil then
      table.insert(extra, "--key")
      table.insert(extra, key)
   end
   if type(job.job_id) == "number" and job.job_id > 0 and job.job_id < 4294967294 then
      table.insert(extra, "--job-id " .. string.format("%d", job.job_id))
   end
   if type(job.time_limit) == "number" and job.time_limit >= 0 then
      table.insert(extra, "--time-limit " .. string.format("%d", job.time_limit))
   end
   return extra
end

--[[ The check of one job: `job` is what is judged (the submission, or for an update the
record with the update's changes), `opts` its --ft-* options, `ask` its GPU request
(request(job)), `out_desc` where a resize is written (the submission or the update
request). ]]
local function judge(job, opts, ask, out_desc)
   -- the model first: --ft-model, else the job's --ft-config names it (the check reads the
   -- file); a relative --ft-model or --ft-config is the user's, from the directory the job
   -- was submitted in
   -- the first field is the model, always (empty when the config names it): a value that
   -- fitgate ctld never reads as an option
   local args = { opts.ft_model or "" }
   if job.work_dir ~= nil and job.work_dir ~= "" then
      table.insert(args, "--base-dir=" .. job.work_dir)
   end
   -- every --ft-* option as the job gave it (a flag has an empty value)
   for k, v in pairs(opts) do
      if FLAGS[string.sub(k, 4)] then
         table.insert(args, "--" .. string.gsub(k, "_", "-"))
      elseif k ~= "ft_model" then
         table.insert(args, "--" .. string.gsub(k, "_", "-") .. "=" .. v)
      end
   end
   if ask.opt ~= "" then table.insert(args, ask.opt) end
   local nodes = job.min_nodes
   if nodes ~= nil and nodes > 0 and nodes < 100000 and ask.kind == "per_node" then
      table.insert(args, string.format("--nodes=%d", nodes))
   end
   if job.partition ~= nil and job.partition ~= "" then
      table.insert(args, "--partition=" .. string.match(job.partition, "^[^,]+"))
   end
   local extra = job_numbers(job)
   local now = os.time()
   if now < STALLED_UNTIL then
      -- fitgate ctld gave no answer in time moments ago: decided by OnError now, logged
      table.insert(extra, "--skip 'fitgate ctld gave no answer in time less than " .. STALL_S ..
                   " s ago'")
   end
   -- the file systems whose check timed out lately: a job on one of them is decided by
   -- OnError by fitgate ctld at once (and logged); other jobs are checked
   for mp, untl in pairs(STALLED) do
      if now < untl then table.insert(extra, "--stalled " .. mp) else STALLED[mp] = nil end
   end
   local a, why = ctld(job, args, extra)
   if a == nil then return no_answer(job, why) end
   if a.verdict == "reject" then
      slurm.log_info("fitgate: refused a job of uid %s (%s): %s", tostring(job.user_id),
                     esc(job.name), esc(a.say[1] or "rejected"))
      return slurm.ERROR
   end
   if a.verdict == "resize" then
      -- resized: the request after the decision, in the job's own units
      local r = resized(a.request)
      if r == nil then return no_answer(job, "no request in fitgate's answer") end
      if ask.kind == "per_task" then
         -- a count per task times the tasks is not the job's to change here: say it
         return refuse(job, string.format("fitgate: rejected: this job asks for GPUs " ..
                       "per task; ask for --gpus=%s in all", r.gpus or ""))
      end
      if r.per_job ~= nil then out_desc.tres_per_job = r.per_job end
      if r.per_node ~= nil then out_desc.tres_per_node = r.per_node end
      -- the node count of a per-node request (one when fitgate names none); a --gpus
      -- request's only when fitgate spreads it over more than one node
      if r.nodes ~= nil then
         out_desc.min_nodes = r.nodes
      elseif r.per_node ~= nil then
         out_desc.min_nodes = 1
      end
   end
   return slurm.SUCCESS
end

--[[ RequireTag at the controller: an untagged job that asks for GPUs, on a site whose policy
turns RequireTag on, is shown to fitgate ctld (--untagged), which applies the partition's
rules as the plugin does (fitgate_alloc.c) and writes the audit line: a job submitted with a
private slurm.conf (empty plugstack) or through slurmrestd is refused like an sbatch one. ]]
local function untagged(job_desc)
   local ask = request(job_desc)
   if ask.opt == "" or not require_tag_somewhere() then return slurm.SUCCESS end
   local args = { "", ask.opt }
   if job_desc.partition ~= nil and job_desc.partition ~= "" then
      table.insert(args, "--partition=" .. string.match(job_desc.partition, "^[^,]+"))
   end
   local extra = job_numbers(job_desc)
   table.insert(extra, "--untagged")
   local a, why = ctld(job_desc, args, extra)
   if a == nil then return no_answer(job_desc, why) end
   if a.verdict == "reject" then
      slurm.log_info("fitgate: refused an untagged GPU job of uid %s (%s): RequireTag",
                     tostring(job_desc.user_id), esc(job_desc.name))
      return slurm.ERROR
   end
   return slurm.SUCCESS
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   local opts, forged = spank_options(job_desc)
   if opts == nil then
      return refuse(job_desc, "fitgate: rejected: this job's fitgate options are not what " ..
                    "sbatch sends: " .. forged .. "; submit it with sbatch --ft-...")
   end
   if (opts.ft_model == nil or opts.ft_model == "") and
      (opts.ft_config == nil or opts.ft_config == "") then
      return untagged(job_desc)
   end
   plan_from_submission(job_desc)
   -- the node's card: the type the job asked Slurm for (a resize keeps the job's own
   -- spelling), else its --ft-gpu
   local ask = request(job_desc)
   local rc = judge(job_desc, opts, ask, job_desc)
   if rc == slurm.SUCCESS then
      card_for_node(job_desc, ask.type or opts.ft_gpu)
   end
   return rc
end

--[[ An update of a pending job (scontrol update, REST) that changes what was judged: its GPU
request, node count or partition (a user may lower their own job's GPUs after admission).  The
record's options are its spank_job_env (slurmctld keeps no job environment in the record, so
a job tagged only in its environment, over REST, is not seen here; the node's check of the
GPUs it really gets still is). ]]
local NO_VAL = 4294967294
local function set(v)
   return v ~= nil and not (type(v) == "number" and v >= NO_VAL)
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   if modify_uid == 0 then return slurm.SUCCESS end   -- root's changes are the admin's call
   if not (set(job_desc.tres_per_node) or set(job_desc.tres_per_job) or
           set(job_desc.tres_per_task) or set(job_desc.min_nodes) or set(job_desc.partition)) then
      return slurm.SUCCESS
   end
   local opts, forged = spank_options({ spank_job_env = job_rec.spank_job_env })
   if opts == nil then
      return refuse(job_rec, "fitgate: rejected: this job's fitgate options are not what " ..
                    "sbatch sends: " .. forged)
   end
   if (opts.ft_model == nil or opts.ft_model == "") and
      (opts.ft_config == nil or opts.ft_config == "") then
      return slurm.SUCCESS
   end
   local function pick(k)
      if set(job_desc[k]) then return job_desc[k] end
      return job_rec[k]
   end
   local view = {
      tres_per_node = pick("tres_per_node"), tres_per_job = pick("tres_per_job"),
      tres_per_task = pick("tres_per_task"), min_nodes = pick("min_nodes"),
      partition = pick("partition"), num_tasks = 1,
      user_id = job_rec.user_id, group_id = job_rec.group_id, name = job_rec.name,
      work_dir = job_rec.work_dir, job_id = job_rec.job_id, time_limit = job_rec.time_limit,
      spank_job_env = job_rec.spank_job_env,
   }
   return judge(view, opts, request(view), job_desc)
end

slurm.log_info("fitgate job_submit.lua loaded (policy %s)", POLICY)
return slurm.SUCCESS
