-- fairshare: rank a job at its submission.
--
-- `fairshare slurm sync` and `watch` set every pending job's site factor from a fairshare
-- policy, once a pass. A job submitted between two passes would wait at site factor 0, below
-- every ranked job, until the next one. With this script Slurm gives it, at submission, the
-- factor its association's next job gets (`account|user|factor` in the table the adapter
-- rewrites every pass: `submit_table` in /etc/fairshare/slurm.toml).
--
-- Install (the Debian package ships it as /usr/share/fairshare/slurm/job_submit.lua): copy it
-- beside slurm.conf as job_submit.lua, set `JobSubmitPlugins=lua` in slurm.conf, keep
-- `submit_table` in slurm.toml equal to TABLE below (the adapter's unit makes its folder,
-- readable by slurmctld's user), and run `scontrol reconfigure`.
--
-- What happens when the table is stale or missing: nothing. The job keeps site factor 0 until
-- the next pass ranks it, as without this script; the submission itself is never refused.
-- A table is stale when it was written more than MAX_AGE seconds ago (the adapter stopped).
-- A site factor the submitter set (`sbatch` cannot, an administrator's plugin may) is kept.

local TABLE = "/run/fairshare-slurm/submit-factors.txt"
-- fairshare refuses a submit_table with passes further apart than this (SUBMIT_TABLE_LIFE_S).
local MAX_AGE = 600

-- The site factor of `account`/`user` in the table, or nil (missing, stale or not listed).
local function lookup(account, user)
    local file = io.open(TABLE, "r")
    if file == nil then
        return nil
    end
    local written = tonumber(string.match(file:read("*l") or "", "^# fairshare (%d+)$"))
    if written == nil or os.time() - written > MAX_AGE then
        file:close()
        return nil
    end
    local wanted = account .. "|" .. user .. "|"
    for line in file:lines() do
        if string.sub(line, 1, #wanted) == wanted then
            file:close()
            local factor = tonumber(string.sub(line, #wanted + 1))
            -- Only a whole number from 0 to fairshare's largest weight is a site factor;
            -- anything else sets nothing.
            if factor == nil or factor < 0 or factor > 1000000000 or factor ~= math.floor(factor) then
                return nil
            end
            return math.floor(factor)
        end
    end
    file:close()
    return nil
end

function slurm_job_submit(job_desc, part_list, submit_uid)
    if job_desc.site_factor ~= nil and job_desc.site_factor ~= slurm.NO_VAL then
        return slurm.SUCCESS
    end
    local user = job_desc.user_name
    local account = job_desc.account or job_desc.default_account
    if user == nil or account == nil then
        return slurm.SUCCESS
    end
    -- Whatever goes wrong reading the table, the submission goes on without a factor.
    local ok, factor = pcall(lookup, account, user)
    if ok and factor ~= nil then
        job_desc.site_factor = factor
        slurm.log_info("fairshare: job of %s (%s) submitted with site factor %s", user, account, tostring(factor))
    end
    return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
    return slurm.SUCCESS
end

return slurm.SUCCESS
