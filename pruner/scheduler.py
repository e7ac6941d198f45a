"""Where every stored schedule finds its job. APScheduler pickles a job's function into
the metastore by reference (apscheduler_jobs.job_state) and deletes a stored job whose
reference no longer imports; the schedules of every release name
`pruner.scheduler:refresh_table` (pruner.daemon.schedules.REFRESH_JOB), so that name must
import, wherever the scheduler lives (pruner.daemon.scheduler)."""

from pruner.daemon.scheduler import refresh_table

__all__ = ["refresh_table"]
