--[[
cli_filter.lua - fitgate in sbatch / salloc / srun (Slurm cli_filter/lua).

The same check as the SPANK plugin's submit-time check, for sites that prefer a
script they can read and change: jobs tagged with the SPANK plugin's options
(--ft-model=ID --ft-mode=MODE ...) are judged by `fitgate check --policy`, the
plugin's own decision with the site's fitgate.conf, against the GPUs they ask
for; untagged jobs are not touched.  Every --ft-* option is passed on as it
is.  The SPANK plugin
must still be listed in plugstack.conf so that the --ft-* options are accepted
(action=off if only this script should act).  Like the plugin's submit-time
check this runs on the user's side: for enforcement use job_submit.lua.

Install: copy next to slurm.conf as cli_filter.lua, set
CliFilterPlugins=cli_filter/lua.  Edit the settings below.
]]

local FITGATE = "/usr/local/bin/fitgate"
local POLICY = "/etc/slurm/fitgate.conf"   -- the plugin's policy: the same decision
local TIMEOUT_S = 5           -- the whole check; the user's sbatch waits for it
local ON_ERROR = "allow"      -- allow | reject: fitgate could not run or timed out
local PLUGIN = "fitgate"      -- the SPANK plugin's name

local function q(s)
   return "'" .. string.gsub(tostring(s), "'", "'\\''") .. "'"
end

local function on_error(what)
   if ON_ERROR == "reject" then
      slurm.log_error("fitgate: rejected: cannot check this job: %s (OnError=reject)", what)
      return slurm.ERROR
   end
   slurm.log_info("fitgate: warning: cannot check this job: %s; it goes on unchecked", what)
   return slurm.SUCCESS
end

function slurm_cli_setup_defaults(options, early_pass)
   return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
   local sp = options.spank and options.spank[PLUGIN]
   local model = sp and sp["ft-model"]
   if model == nil or model == "" then
      return slurm.SUCCESS
   end
   -- srun inside an allocation: the allocation was checked
   if options.type == "srun" and os.getenv("SLURM_JOB_ID") ~= nil then
      return slurm.SUCCESS
   end
   local cmd = { string.format("timeout -k 1 %d %s check %s --json", TIMEOUT_S, q(FITGATE),
                               q(model)) }
   local f = io.open(POLICY, "r")
   if f ~= nil then
      f:close()
      table.insert(cmd, "--policy=" .. q(POLICY))
   end
   -- every --ft-* option as the job gave it; a flag the job did not give reads "unset", one it
   -- gave reads "set", which fitgate check takes as given
   for k, v in pairs(sp) do
      if k ~= "ft-model" and v ~= "unset" and string.match(k, "^ft%-[%w-]+$") then
         table.insert(cmd, "--" .. k .. "=" .. q(v))
      end
   end
   -- the GPU request in Slurm's own spelling, and where a resize writes it back
   local name
   for _, o in ipairs({ "gres", "gpus-per-node", "gpus" }) do
      local v = options[o]
      if name == nil and v ~= nil and v ~= "" and v ~= "unset" and
         (o ~= "gres" or string.match(v, "gpu")) then
         name = o
         table.insert(cmd, "--" .. o .. "=" .. q(v))
      end
   end
   local nodes = tonumber(string.match(options["nodes"] or "", "^(%d+)"))
   if nodes ~= nil and nodes > 0 and name ~= "gpus" then
      table.insert(cmd, string.format("--nodes=%d", nodes))
   end
   local part = options["partition"]
   if part ~= nil and part ~= "" and part ~= "unset" then
      table.insert(cmd, "--partition=" .. q(string.match(part, "^[^,]+")))
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
   local d = string.match(out, '"decision"%s*:%s*(%b{})') or ""
   local lines = string.match(d, '"lines"%s*:%s*(%b[])') or ""
   for l in string.gmatch(lines, '"(fitgate:[^"]*)"') do
      if rc == 1 then slurm.log_error("%s", l) else slurm.log_info("%s", l) end
   end
   if rc == 1 then return slurm.ERROR end
   if rc == 3 then
      -- resized: "--gres=gpu:t4:4" / "--nodes=2 --gpus-per-node=t4:4", the job's own spelling
      local req = string.match(d, '"request"%s*:%s*"([^"]*)"') or ""
      for o, v in string.gmatch(req, "%-%-([%w-]+)=(%S+)") do
         options[o] = v
      end
   end
   return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, job_id, step_id)
   return slurm.SUCCESS
end
