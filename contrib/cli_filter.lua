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

It runs `fitgate ctld --door sbatch` (cli/cmd_ctld.c) as job_submit.lua does,
never a shell line with the job's text: the options go NUL-separated through a
0600 temporary file that is its standard input, and the answer is fixed,
percent-encoded records (docs/plugin.md, "The door cannot be skipped").

Install: copy next to slurm.conf as cli_filter.lua, set
CliFilterPlugins=cli_filter/lua.  Edit the settings below.
]]

local FITGATE = "/usr/local/bin/fitgate"
local POLICY = "/etc/slurm/fitgate.conf"   -- the plugin's policy: the same decision
local TIMEOUT_MS = 5000       -- the check; the user's sbatch waits for it
local ON_ERROR = "allow"      -- allow | reject: without a policy file, or fitgate could not run
local PLUGIN = "fitgate"      -- the SPANK plugin's name

local function on_error(what)
   if ON_ERROR == "reject" then
      slurm.log_error("fitgate: rejected: cannot check this job: %s (OnError=reject)", what)
      return slurm.ERROR
   end
   slurm.log_info("fitgate: warning: cannot check this job: %s; it goes on unchecked", what)
   return slurm.SUCCESS
end

-- fitgate ctld's answer: { say = { lines }, verdict =, request = } (percent-encoded fields)
local function unesc(f)
   if f == "%00" then return "" end
   return (string.gsub(f, "%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

local function ctld(args, door)
   local path = os.tmpname()
   local f = io.open(path, "w")
   if f == nil then return nil, "cannot write " .. path end
   for _, a in ipairs(args) do f:write(tostring(a), "\0") end
   f:close()
   local cmd = { "exec timeout -k 1", tostring(math.ceil(TIMEOUT_MS / 1000) + 1), FITGATE,
                 "ctld --timeout-ms", tostring(TIMEOUT_MS), "--on-error", ON_ERROR,
                 "--door", door }
   local pf = io.open(POLICY, "r")
   if pf ~= nil then
      pf:close()
      table.insert(cmd, "--policy " .. POLICY)
   end
   local h = io.popen(table.concat(cmd, " ") .. " < " .. path .. " 2>/dev/null")
   if h == nil then
      os.remove(path)
      return nil, "cannot run " .. FITGATE
   end
   local out = h:read("*a") or ""
   h:close()
   os.remove(path)
   local a = { say = {} }
   for line in string.gmatch(out, "[^\n]+") do
      local m = string.match(line, "^fitgate%-say (%S+)$")
      if m ~= nil then table.insert(a.say, unesc(m)) end
      local v, r = string.match(line, "^fitgate%-answer 1 (%a+) (%S+)$")
      if v ~= nil then a.verdict, a.request = v, unesc(r) end
   end
   if a.verdict == nil then return nil, "fitgate ctld gave no answer" end
   return a
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
   local args = { model }
   -- every --ft-* option as the job gave it; a flag the job did not give reads "unset", one it
   -- gave reads "set", which fitgate check takes as given
   for k, v in pairs(sp) do
      if k ~= "ft-model" and v ~= "unset" and string.match(k, "^ft%-[%w-]+$") then
         table.insert(args, "--" .. k .. "=" .. v)
      end
   end
   -- the GPU request in Slurm's own spelling, and where a resize writes it back
   local name
   for _, o in ipairs({ "gres", "gpus-per-node", "gpus" }) do
      local v = options[o]
      if name == nil and v ~= nil and v ~= "" and v ~= "unset" and
         (o ~= "gres" or string.match(v, "gpu")) then
         name = o
         table.insert(args, "--" .. o .. "=" .. v)
      end
   end
   local nodes = tonumber(string.match(options["nodes"] or "", "^(%d+)"))
   if nodes ~= nil and nodes > 0 and name ~= "gpus" then
      table.insert(args, string.format("--nodes=%d", nodes))
   end
   local part = options["partition"]
   if part ~= nil and part ~= "" and part ~= "unset" then
      table.insert(args, "--partition=" .. string.match(part, "^[^,]+"))
   end
   local door = options.type
   if door ~= "salloc" and door ~= "srun" then door = "sbatch" end
   local a, why = ctld(args, door)
   if a == nil then return on_error(why) end
   for _, l in ipairs(a.say) do
      if a.verdict == "reject" then slurm.log_error("%s", l) else slurm.log_info("%s", l) end
   end
   if a.verdict == "reject" then return slurm.ERROR end
   if a.verdict == "resize" then
      -- resized: "--gres=gpu:t4:4" / "--nodes=2 --gpus-per-node=t4:4", the job's own spelling
      for o, v in string.gmatch(a.request, "%-%-([%w-]+)=(%S+)") do
         options[o] = v
      end
   end
   return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, job_id, step_id)
   return slurm.SUCCESS
end
