/*
 * drive_spinlocks: the micro-benchmark of the 2020 pgsql-hackers thread on ARM spinlocks.
 *
 * SELECT drive_spinlocks(N) calls XLogGetLastRemovedSegno() N times. Each call takes and
 * releases XLogCtl->info_lck, a slock_t shared by every backend, and does almost nothing else,
 * so under pgbench with several clients the backends contend on that one spinlock: the inlined
 * TAS of SpinLockAcquire() fails and s_lock() is entered from xlog.c, naming
 * XLogGetLastRemovedSegno as its caller. scripts/drive-spinlocks.sh builds, installs and runs it;
 * `lockprof record --spin s_lock` counts those entries per call site.
 *
 * Written for lockprof from the thread's description; built with PGXS against the installed
 * server headers (Debian: postgresql-server-dev-NN).
 */
#include "postgres.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "miscadmin.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(drive_spinlocks);

/* drive_spinlocks(calls int) returns bigint: the sum of the segment numbers read, so the calls
 * cannot be optimised away and the result shows they ran. */
Datum
drive_spinlocks(PG_FUNCTION_ARGS)
{
	int32		calls = PG_GETARG_INT32(0);
	uint64		sum = 0;

	if (calls < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("drive_spinlocks: calls must not be negative, got %d", calls)));
	for (int32 i = 0; i < calls; i++)
	{
		sum += XLogGetLastRemovedSegno();
		CHECK_FOR_INTERRUPTS();
	}
	PG_RETURN_INT64((int64) sum);
}
