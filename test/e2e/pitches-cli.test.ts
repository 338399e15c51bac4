import { describe, expect, it } from 'vitest';
import { reserveAllowance } from '../../commands/allowances/allowance';
import { PITCH_ALLOWANCE } from '../../commands/pitches/request-pitch';
import { forbidden } from '../../src/domain/errors';
import { newEventsFor } from '../../commands/handle';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { jobStream } from '../../src/domain/jobs';
import { hostedCli } from '../support/cli';
import { freshDatabase, onRealPostgres } from '../support/db';
import { openJobRuntime } from '../support/jobs';
import { submitPitch } from '../support/pitch-jobs';

// The operator's reconciliation of pitch allowances: a reservation whose report never came to be is released, one whose
// report ended (its worker gone before settling) is settled as the end says (a failed report's pitch stays consumed),
// one whose report is still under way is listed and kept.
(onRealPostgres ? describe : describe.skip)('npm run cli -- pitches:reconcile', () => {
  it('given a reservation whose admission died before the report existed, one whose report failed or completed unsettled, and one whose report is queued, then the first is released, the ended ones consumed, the last listed and kept', async () => {
    const database = await freshDatabase();
    const org = newId();
    const gone = newId();
    let queued = '';
    let failed = '';
    let completed = '';
    const rt = await openJobRuntime({ ...database, close: async () => {} }, { specs: [], workers: false });
    try {
      const r = await reserveAllowance(
        { store: rt.store, organizationId: org, actor: SYSTEM_ACTOR },
        {
          allowance: PITCH_ALLOWANCE,
          period: new Date().toISOString().slice(0, 7),
          reservation_id: gone,
          subject: jobStream('pitch', gone),
          limit: 10,
          on_failure: 'consumed',
          exhausted: forbidden('Pitch allowance exhausted'),
        },
      );
      expect(r).not.toHaveProperty('kind');
      queued = await submitPitch(rt, org, 'reconcile-1');
      // two reports that ended without their reservation settled (the instance died between the end and the settlement)
      const ctx = { store: rt.store, organizationId: org, actor: SYSTEM_ACTOR };
      failed = await submitPitch(rt, org, 'reconcile-2');
      await rt.store.append(
        jobStream('pitch', failed),
        newEventsFor(ctx, [{ type: 'JobFailed', data: { job_id: failed, kind: 'pitch', error_kind: 'research_failed', message: 'unreadable' } }]),
        'any',
      );
      completed = await submitPitch(rt, org, 'reconcile-3');
      await rt.store.append(
        jobStream('pitch', completed),
        newEventsFor(ctx, [{ type: 'JobSucceeded', data: { job_id: completed, kind: 'pitch' } }]),
        'any',
      );
    } finally {
      await rt.close();
    }
    // the two runs through one CLI host process (the module graph loaded once)
    const host = hostedCli(database.url!);
    const cli = host.run;
    const first = await cli('pitches:reconcile', '--older-than-minutes', '0');
    expect(first.status, first.stderr).toBe(0);
    const out = JSON.parse(first.stdout);
    expect(out.open.map((o: { reservation_id: string; job: string }) => [o.reservation_id, o.job]).sort()).toEqual(
      [
        [gone, 'gone'],
        [queued, 'queued'],
        [failed, 'failed'],
        [completed, 'succeeded'],
      ].sort(),
    );
    const byId = (a: { reservation_id: string }, b: { reservation_id: string }) => a.reservation_id.localeCompare(b.reservation_id);
    expect([...out.settled].sort(byId)).toEqual(
      [
        { reservation_id: gone, outcome: 'released' },
        { reservation_id: failed, outcome: 'consumed' },
        { reservation_id: completed, outcome: 'consumed' },
      ].sort(byId),
    );
    const again = JSON.parse((await cli('pitches:reconcile', '--older-than-minutes', '0')).stdout);
    expect(again.open.map((o: { reservation_id: string }) => o.reservation_id)).toEqual([queued]);
    expect(again.settled).toEqual([]);
    await host.close();
    await database.close();
  }, 180_000);
});
