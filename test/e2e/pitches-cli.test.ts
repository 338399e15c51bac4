import { describe, expect, it } from 'vitest';
import { reserveAllowance } from '../../commands/allowances/allowance';
import { PITCH_ALLOWANCE } from '../../commands/pitches/request-pitch';
import { forbidden } from '../../src/domain/errors';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { jobStream } from '../../src/domain/jobs';
import { spawnCli } from '../support/cli';
import { freshDatabase, onRealPostgres } from '../support/db';
import { openJobRuntime } from '../support/jobs';
import { submitPitch } from '../support/pitch-jobs';

// The operator's reconciliation of pitch allowances: a reservation whose report never came to be is released, one whose
// report is still under way is listed and kept.
(onRealPostgres ? describe : describe.skip)('npm run cli -- pitches:reconcile', () => {
  it('given a reservation whose admission died before the report existed and one whose report is queued, then the first is released and the second listed and kept', async () => {
    const database = await freshDatabase();
    const org = newId();
    const gone = newId();
    let queued = '';
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
    } finally {
      await rt.close();
    }
    const cli = spawnCli(database.url!);
    const first = cli('pitches:reconcile', '--older-than-minutes', '0');
    expect(first.status, first.stderr).toBe(0);
    const out = JSON.parse(first.stdout);
    expect(out.open.map((o: { reservation_id: string; job: string }) => [o.reservation_id, o.job]).sort()).toEqual(
      [
        [gone, 'gone'],
        [queued, 'queued'],
      ].sort(),
    );
    expect(out.settled).toEqual([{ reservation_id: gone, outcome: 'released' }]);
    const again = JSON.parse(cli('pitches:reconcile', '--older-than-minutes', '0').stdout);
    expect(again.open.map((o: { reservation_id: string }) => o.reservation_id)).toEqual([queued]);
    expect(again.settled).toEqual([]);
    await database.close();
  }, 180_000);
});
