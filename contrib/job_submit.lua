--[[
job_submit.lua - fitgate at the controller (Slurm job_submit/lua).

For sites that want slurmctld to enforce the GPU-memory check: the SPANK
plugin's checks run in sbatch / salloc / srun, on the user's side, and a user
can skip them with a slurm.conf of their own; this script runs in slurmctld.

Jobs tagged with the SPANK plugin's options (--ft-model=ID --ft-mode=MODE ...:
slurmctld sees them in job_desc.spank_job_env as _SLURM_SPANK_OPTION_fitgate_*)
are checked with `fitgate check ... --json` against the GPUs they ask for
(--gres=gpu:TYPE:N, --gpus=TYPE:N, or --ft-gpu / --ft-gpus); untagged jobs are
not touched.  The SPANK plugin must still be listed in plugstack.conf so that
sbatch accepts the --ft-* options (with action=off if only this script should
act).

Install: copy next to slurm.conf as job_submit.lua, set JobSubmitPlugins=lua,
`scontrol reconfigure`.  Edit the settings below.

fitgate runs as the submitting user (setpriv), so a model path is read with the
user's rights, and under `timeout`: slurmctld waits for this call.
]]

local FITGATE = "/usr/local/bin/fitgate"
local TIMEOUT_S = 5           -- the whole check; slurmctld blocks meanwhile
local ACTION = "reject"       -- reject | warn | resize
local ON_ERROR = "allow"      -- allow | reject: fitgate failed or timed out
local PLUGIN = "fitgate"      -- the SPANK plugin's name (prefix of its options)

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

-- Shell-quote one argument.
local function q(s)
   return "'" .. string.gsub(tostring(s), "'", "'\\''") .. "'"
end

-- The SPANK options of the job: { ft_model = "...", ft_mode = "...", ... }
local function spank_options(job_desc)
   local opts = {}
   local env = job_desc.spank_job_env
   if env == nil then return opts end
   local prefix = "_SLURM_SPANK_OPTION_" .. PLUGIN .. "_"
   for _, kv in pairs(env) do
      local k, v = string.match(kv, "^([^=]+)=(.*)$")
      if k ~= nil and string.sub(k, 1, #prefix) == prefix then
         opts[string.sub(k, #prefix + 1)] = v
      end
   end
   return opts
end

-- The first GPU entry of a TRES string ("gres:gpu:t4:2,gres:mps:100"): type, count.
local function gpu_entry(tres)
   if tres == nil then return nil end
   for entry in string.gmatch(tres, "[^,]+") do
      local rest = string.match(entry, "^gres[:/]gpu(.*)$") or string.match(entry, "^gpu(.*)$")
      if rest ~= nil then
         rest = string.gsub(rest, "^[:=]", "")
         local t, n = string.match(rest, "^([^:]+):(%d+)$")
         if t ~= nil then return t, tonumber(n) end
         if string.match(rest, "^%d+$") then return nil, tonumber(rest) end
         if rest ~= "" then return rest, 1 end
         return nil, 1
      end
   end
   return nil
end

-- job option -> fitgate check option
local MAP = {
   ft_mode = "--mode", ft_seq_len = "--seq-len", ft_batch = "--batch",
   ft_lora_rank = "--lora-rank", ft_lora_targets = "--lora-targets",
   ft_precision = "--precision", ft_optimizer = "--optimizer", ft_quant = "--quant",
   ft_zero = "--zero", ft_attention = "--attention",
}

local function run_check(opts, gpu, count, nodes, uid, gid)
   local cmd = {}
   if AS_ROOT and uid ~= nil and uid ~= 0 then
      table.insert(cmd, string.format("setpriv --reuid=%d --regid=%d --clear-groups", uid, gid))
   end
   table.insert(cmd, string.format("timeout -k 1 %d %s check %s", TIMEOUT_S, q(FITGATE),
                                   q(opts.ft_model)))
   for k, flag in pairs(MAP) do
      if opts[k] ~= nil and opts[k] ~= "" then
         table.insert(cmd, flag .. " " .. q(opts[k]))
      end
   end
   if opts.ft_grad_ckpt ~= nil then table.insert(cmd, "--grad-ckpt") end
   table.insert(cmd, string.format("--gpu %s --gpus %d --nodes %d --json", q(gpu), count, nodes))
   local h = io.popen(table.concat(cmd, " ") .. " 2>&1; echo \"__fitgate_rc=$?\"")
   if h == nil then return 2, "cannot run " .. FITGATE end
   local out = h:read("*a") or ""
   h:close()
   local rc = tonumber(string.match(out, "__fitgate_rc=(%d+)")) or 2
   out = string.gsub(out, "__fitgate_rc=%d+%s*$", "")
   return rc, out
end

local function plan_field(out, key)
   local plan = string.match(out, '"plan"%s*:%s*(%b{})')
   if plan == nil then return nil end
   return string.match(plan, '"' .. key .. '"%s*:%s*"?([^",}%s]+)')
end

local function on_error(what)
   if ON_ERROR == "reject" then
      slurm.log_user("fitgate: rejected: cannot check this job: %s (OnError=reject)", what)
      return slurm.ERROR
   end
   slurm.log_user("fitgate: warning: cannot check this job: %s; it goes on unchecked", what)
   return slurm.SUCCESS
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   local opts = spank_options(job_desc)
   if opts.ft_model == nil or opts.ft_model == "" then
      return slurm.SUCCESS
   end
   -- the request: per node (--gres, --gpus-per-node), else per job (--gpus), else --ft-gpu(s)
   local field, per_job = "tres_per_node", false
   local gtype, count = gpu_entry(job_desc.tres_per_node)
   if count == nil then
      gtype, count = gpu_entry(job_desc.tres_per_job)
      field, per_job = "tres_per_job", true
   end
   if count == nil and opts.ft_gpus ~= nil then
      count = tonumber(opts.ft_gpus)
      field, per_job = "tres_per_node", false
   end
   gtype = gtype or opts.ft_gpu
   if count == nil then
      return on_error("it asks for no GPU (--gres=gpu:TYPE:N)")
   end
   if gtype == nil then
      return on_error("its GPU type is unknown (--gres=gpu:TYPE:N or --ft-gpu=TYPE)")
   end
   local nodes = job_desc.min_nodes
   if nodes == nil or nodes == 0 or nodes > 100000 or per_job then nodes = 1 end

   local rc, out = run_check(opts, gtype, count, nodes, job_desc.user_id, job_desc.group_id)
   if rc == 0 then
      return slurm.SUCCESS
   end
   if rc ~= 1 then
      local why = string.match(out, "fitgate[^\n]*") or ("exit " .. rc)
      if rc == 124 or rc == 137 then why = "fitgate took longer than " .. TIMEOUT_S .. " s" end
      return on_error(why)
   end
   local need = tonumber(plan_field(out, "gpus"))
   local verdict = plan_field(out, "verdict") or "no"
   local tp, pp = plan_field(out, "tp") or "1", plan_field(out, "pp") or "1"
   local asked = string.format("%d x %s", count * nodes, gtype)
   if need == nil or verdict == "no" then
      slurm.log_user("fitgate: rejected: %s (%s) does not fit %s, nor any layout within the " ..
                     "planner's limits", opts.ft_model, opts.ft_mode or "full", asked)
      return slurm.ERROR
   end
   local want = string.format("gres:gpu:%s:%d", gtype, need)
   if ACTION == "resize" then
      if per_job then
         job_desc.tres_per_job = want
      else
         job_desc.tres_per_node = want
         job_desc.min_nodes = 1
      end
      slurm.log_user("fitgate: resized: %s (%s) does not fit %s; the job now asks for %s " ..
                     "(TP=%s PP=%s)", opts.ft_model, opts.ft_mode or "full", asked, want, tp, pp)
      return slurm.SUCCESS
   end
   local msg = string.format("fitgate: %s: %s (%s) does not fit %s; it needs %d GPUs " ..
                             "(TP=%s PP=%s): ask for --gres=gpu:%s:%d",
                             ACTION == "warn" and "warning" or "rejected", opts.ft_model,
                             opts.ft_mode or "full", asked, need, tp, pp, gtype, need)
   slurm.log_user("%s", msg)
   if ACTION == "warn" then return slurm.SUCCESS end
   return slurm.ERROR
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   return slurm.SUCCESS
end

slurm.log_info("fitgate job_submit.lua loaded (action=%s)", ACTION)
return slurm.SUCCESS
