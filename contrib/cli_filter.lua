--[[
cli_filter.lua - fitgate in sbatch / salloc / srun (Slurm cli_filter/lua).

The same check as the SPANK plugin's submit-time check, for sites that prefer a
script they can read and change: jobs tagged with the SPANK plugin's options
(--ft-model=ID --ft-mode=MODE ...) are checked with `fitgate check ... --json`
against the GPUs they ask for; untagged jobs are not touched.  The SPANK plugin
must still be listed in plugstack.conf so that the --ft-* options are accepted
(action=off if only this script should act).  Like the plugin's submit-time
check this runs on the user's side: for enforcement use job_submit.lua.

Install: copy next to slurm.conf as cli_filter.lua, set
CliFilterPlugins=cli_filter/lua.  Edit the settings below.
]]

local FITGATE = "/usr/local/bin/fitgate"
local TIMEOUT_S = 5           -- the whole check; the user's sbatch waits for it
local ACTION = "reject"       -- reject | warn | resize
local ON_ERROR = "allow"      -- allow | reject: fitgate failed or timed out
local PLUGIN = "fitgate"      -- the SPANK plugin's name

local function q(s)
   return "'" .. string.gsub(tostring(s), "'", "'\\''") .. "'"
end

-- "gres:gpu:t4:2" / "gpu:t4:2" / "t4:2" / "2": type (or nil), count (or nil)
local function gpu_spec(v, gres)
   if v == nil or v == "" then return nil end
   for entry in string.gmatch(v, "[^,]+") do
      local rest = entry
      if gres then
         rest = string.match(entry, "^gres[:/]gpu(.*)$") or string.match(entry, "^gpu(.*)$")
         if rest ~= nil then rest = string.gsub(rest, "^:", "") end
      end
      if rest ~= nil then
         rest = string.gsub(rest, "%(.*%)$", "")
         local t, n = string.match(rest, "^([^:]+):(%d+)$")
         if t ~= nil then return t, tonumber(n) end
         if string.match(rest, "^%d+$") then return nil, tonumber(rest) end
         if rest ~= "" then return rest, 1 end
         return nil, 1
      end
   end
   return nil
end

local MAP = {
   ["ft-mode"] = "--mode", ["ft-seq-len"] = "--seq-len", ["ft-batch"] = "--batch",
   ["ft-lora-rank"] = "--lora-rank", ["ft-lora-targets"] = "--lora-targets",
   ["ft-precision"] = "--precision", ["ft-optimizer"] = "--optimizer", ["ft-quant"] = "--quant",
   ["ft-zero"] = "--zero", ["ft-attention"] = "--attention",
}

local function on_error(what)
   if ON_ERROR == "reject" then
      slurm.log_error("fitgate: rejected: cannot check this job: %s (OnError=reject)", what)
      return slurm.ERROR
   end
   slurm.log_info("fitgate: warning: cannot check this job: %s; it goes on unchecked", what)
   return slurm.SUCCESS
end

local function plan_field(out, key)
   local plan = string.match(out, '"plan"%s*:%s*(%b{})')
   if plan == nil then return nil end
   return string.match(plan, '"' .. key .. '"%s*:%s*"?([^",}%s]+)')
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
   local name, gtype, count = "gres", nil, nil
   gtype, count = gpu_spec(options["gres"], true)
   if count == nil then
      name = "gpus-per-node"
      gtype, count = gpu_spec(options["gpus-per-node"], false)
   end
   if count == nil then
      name = "gpus"
      gtype, count = gpu_spec(options["gpus"], false)
   end
   if count == nil and sp["ft-gpus"] ~= nil then
      name, count = "gres", tonumber(sp["ft-gpus"])
   end
   gtype = gtype or sp["ft-gpu"]
   if count == nil then return on_error("it asks for no GPU (--gres=gpu:TYPE:N)") end
   if gtype == nil then return on_error("its GPU type is unknown (--ft-gpu=TYPE)") end
   local nodes = tonumber(string.match(options["nodes"] or "", "^(%d+)")) or 1
   if nodes < 1 or name == "gpus" then nodes = 1 end

   local cmd = { string.format("timeout -k 1 %d %s check %s", TIMEOUT_S, q(FITGATE), q(model)) }
   for k, flag in pairs(MAP) do
      if sp[k] ~= nil and sp[k] ~= "" then table.insert(cmd, flag .. " " .. q(sp[k])) end
   end
   -- a flag the job did not give reads "unset" here
   local ckpt = sp["ft-grad-ckpt"]
   if ckpt ~= nil and ckpt ~= "unset" then table.insert(cmd, "--grad-ckpt") end
   table.insert(cmd, string.format("--gpu %s --gpus %d --nodes %d --json", q(gtype), count, nodes))
   local h = io.popen(table.concat(cmd, " ") .. " 2>&1; echo \"__fitgate_rc=$?\"")
   if h == nil then return on_error("cannot run " .. FITGATE) end
   local out = h:read("*a") or ""
   h:close()
   local rc = tonumber(string.match(out, "__fitgate_rc=(%d+)")) or 2
   if rc == 0 then return slurm.SUCCESS end
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
      slurm.log_error("fitgate: rejected: %s (%s) does not fit %s, nor any layout within the " ..
                      "planner's limits", model, sp["ft-mode"] or "full", asked)
      return slurm.ERROR
   end
   local value = string.format("%s:%d", gtype, need)
   if name == "gres" then value = "gpu:" .. value end
   if ACTION == "resize" then
      options[name] = value
      if name ~= "gpus" then options["nodes"] = "1" end
      slurm.log_info("fitgate: resized: %s (%s) does not fit %s; the job now asks for --%s=%s " ..
                     "(TP=%s PP=%s)", model, sp["ft-mode"] or "full", asked, name, value, tp, pp)
      return slurm.SUCCESS
   end
   local msg = string.format("fitgate: %s: %s (%s) does not fit %s; it needs %d GPUs " ..
                             "(TP=%s PP=%s): ask for --%s=%s",
                             ACTION == "warn" and "warning" or "rejected", model,
                             sp["ft-mode"] or "full", asked, need, tp, pp, name, value)
   if ACTION == "warn" then
      slurm.log_info("%s", msg)
      return slurm.SUCCESS
   end
   slurm.log_error("%s", msg)
   return slurm.ERROR
end

function slurm_cli_post_submit(offset, job_id, step_id)
   return slurm.SUCCESS
end
