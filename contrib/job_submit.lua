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
option is passed on as it is, so a new option needs no change here.

The check is offline (--offline): site model directories and the fitgate
cache only, never the hub, so slurmctld never waits on the network; a model
that is in neither follows OnError.  The SPANK plugin must still be listed
in plugstack.conf so that sbatch accepts the --ft-* options (with
action=off if only this script should act).

Install: copy next to slurm.conf as job_submit.lua, set JobSubmitPlugins=lua,
`scontrol reconfigure`.  Edit the settings below.  fitgate runs as the
submitting user (setpriv), so a model path is read with the user's rights,
and under `timeout`: slurmctld waits for this call.
]]

local FITGATE = "/usr/local/bin/fitgate"
local POLICY = "/etc/slurm/fitgate.conf"   -- the plugin's policy: the same decision
local TIMEOUT_S = 5           -- the whole check; slurmctld blocks meanwhile
local ON_ERROR = "allow"      -- allow | reject: fitgate could not run or timed out
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

-- The GPU request as the job spelled it, in `fitgate check`'s Slurm options.
local function request(job_desc)
   local per_node, per_job = job_desc.tres_per_node, job_desc.tres_per_job
   local function gpu(tres)
      if tres == nil then return nil end
      for entry in string.gmatch(tres, "[^,]+") do
         local rest = string.match(entry, "^gres[:/]gpu(.*)$") or string.match(entry, "^gpu(.*)$")
         if rest ~= nil then return string.gsub(rest, "^[:=]", "") end
      end
      return nil
   end
   local g = gpu(per_node)
   if g ~= nil then return "--gres=" .. q("gpu" .. (g ~= "" and ":" .. g or "")), "per_node" end
   g = gpu(per_job)
   if g ~= nil then return "--gpus=" .. q(g ~= "" and g or "1"), "per_job" end
   return "", nil
end

local function on_error(what)
   if ON_ERROR == "reject" then
      slurm.log_user("fitgate: rejected: cannot check this job: %s (OnError=reject)", what)
      return slurm.ERROR
   end
   slurm.log_user("fitgate: warning: cannot check this job: %s; it goes on unchecked", what)
   return slurm.SUCCESS
end

-- The decision's lines, as the plugin prints them.
local function say(out)
   local d = string.match(out, '"decision"%s*:%s*(%b{})') or ""
   local lines = string.match(d, '"lines"%s*:%s*(%b[])') or ""
   for l in string.gmatch(lines, '"(fitgate:[^"]*)"') do
      slurm.log_user("%s", l)
   end
   return d
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   local opts = spank_options(job_desc)
   if opts.ft_model == nil or opts.ft_model == "" then
      return slurm.SUCCESS
   end
   local req, kind = request(job_desc)
   local cmd = {}
   if AS_ROOT and job_desc.user_id ~= nil and job_desc.user_id ~= 0 then
      table.insert(cmd, string.format("setpriv --reuid=%d --regid=%d --clear-groups",
                                      job_desc.user_id, job_desc.group_id))
   end
   table.insert(cmd, string.format("timeout -k 1 %d %s check %s --offline --json --log-as=job_submit",
                                   TIMEOUT_S, q(FITGATE), q(opts.ft_model)))
   local f = io.open(POLICY, "r")
   if f ~= nil then
      f:close()
      table.insert(cmd, "--policy=" .. q(POLICY))
   end
   -- every --ft-* option as the job gave it (a flag has an empty value)
   for k, v in pairs(opts) do
      if k ~= "ft_model" and string.match(k, "^ft_[%w_]+$") then
         table.insert(cmd, "--" .. string.gsub(k, "_", "-") .. "=" .. q(v))
      end
   end
   table.insert(cmd, req)
   local nodes = job_desc.min_nodes
   if nodes ~= nil and nodes > 0 and nodes < 100000 and kind ~= "per_job" then
      table.insert(cmd, string.format("--nodes=%d", nodes))
   end
   if job_desc.partition ~= nil and job_desc.partition ~= "" then
      table.insert(cmd, "--partition=" .. q(string.match(job_desc.partition, "^[^,]+")))
   end
   local h = io.popen(table.concat(cmd, " ") .. " 2>&1; echo \"__fitgate_rc=$?\"")
   if h == nil then return on_error("cannot run " .. FITGATE) end
   local out = h:read("*a") or ""
   h:close()
   local rc = tonumber(string.match(out, "__fitgate_rc=(%d+)")) or 2
   if rc ~= 0 and rc ~= 1 and rc ~= 3 then
      local why = string.match(out, "fitgate[^\n]*") or ("exit " .. rc)
      if rc == 124 or rc == 137 then why = "fitgate took longer than " .. TIMEOUT_S .. " s" end
      return on_error(why)
   end
   local d = say(out)
   if rc == 1 then return slurm.ERROR end
   if rc == 3 then
      -- resized: the request after the decision, in the job's own units
      local count = tonumber(string.match(d, '"count"%s*:%s*(%d+)'))
      local n = tonumber(string.match(d, '"nodes"%s*:%s*(%d+)'))
      local gtype = string.match(req, ":([%w_.-]+):%d+'?$") or
                    string.match(req, "=%'?([%w_.-]+):%d+'?$")
      if count == nil then return on_error("no request in fitgate's answer") end
      local want = "gres:gpu:" .. (gtype ~= nil and gtype .. ":" or "") .. count
      if kind == "per_job" then
         job_desc.tres_per_job = want
      else
         job_desc.tres_per_node = want
         if n ~= nil then job_desc.min_nodes = n end
      end
   end
   return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   return slurm.SUCCESS
end

slurm.log_info("fitgate job_submit.lua loaded (policy %s)", POLICY)
return slurm.SUCCESS
