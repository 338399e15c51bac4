import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { runsProjection } from '../../../projections/runs';
import { MODEL_IDS } from '../../../src/domain/models';
import { anAnswer, aUnit } from '../../support/events';
import { event, projectionSpec, T0, T1 } from '../../support/projection-spec';

const { site, given } = projectionSpec(runsProjection);
const run = randomUUID();
const prompt = randomUUID();
const [first, second] = [randomUUID(), randomUUID()];

const started = (id = run, total = 2) =>
  event('RunStarted', { run_id: id, website_id: site, schedule_id: null, trigger: 'manual', day: '2026-03-01', models: [MODEL_IDS[0]], total });
const requested = (request_id: string, run_id = run) =>
  event('ResponseRequested', aUnit({ request_id, run_id, website_id: site, prompt_id: prompt }));
const answered = (request_id: string, stream = `response-${request_id}`, time = T1) =>
  event(
    'ResponseRecorded',
    anAnswer({ response_id: randomUUID(), website_id: site, prompt_id: prompt, run_id: run, request_id }, 'Acme is good', { run_at: time }),
    {
      stream,
      meta: { time },
    },
  );
const failed = (request_id: string) =>
  event(
    'ResponseFailed',
    {
      request_id,
      run_id: run,
      website_id: site,
      prompt_id: prompt,
      model: MODEL_IDS[0],
      location_id: null,
      error_kind: 'timeout',
      message: 'no answer',
      attempts: 3,
    },
    { stream: `response-${request_id}` },
  );

describe('runs read model: runs and their units of work', () => {
  it('given nothing, when a run starts and asks its units, then the run is unfinished and each unit pending', async () => {
    await given()
      .when(started(), requested(first), requested(second))
      .then({
        rm_runs: [{ id: run, website_id: site, trigger: 'manual', total: 2, recorded: 0, failed: 0, started_at: T0, finished_at: null }],
        rm_run_units: [first, second].sort().map((request_id) => ({ request_id, run_id: run, status: 'pending' })),
      });
  });

  it('given a run of two units, when one is answered and the other fails, then the run is finished at the last outcome', async () => {
    await given(started(), requested(first), requested(second))
      .when(answered(first, undefined, '2026-03-01T12:00:00.000Z'), failed(second))
      .then({
        rm_runs: [{ id: run, recorded: 1, failed: 1, finished_at: '2026-03-01T12:00:00.000Z' }],
        rm_run_units: {
          columns: ['status', 'error_kind', 'attempts'],
          orderBy: 'status',
          rows: [
            { status: 'failed', error_kind: 'timeout', attempts: 3 },
            { status: 'recorded', error_kind: null, attempts: null },
          ],
        },
      });
  });

  it('given a unit answered, when a second answer for it arrives, then it is counted once', async () => {
    await given(started(), requested(first), requested(second), answered(first))
      .when(answered(first))
      .then({ rm_runs: [{ id: run, recorded: 1, finished_at: null }] });
  });

  it('given an imported answer naming a unit, then the run does not count it (not a response stream)', async () => {
    await given(started(), requested(first))
      .when(answered(first, `import-${site}`))
      .then({ rm_runs: [{ id: run, recorded: 0 }], rm_run_units: [{ request_id: first, status: 'pending' }] });
  });

  it('given a run holding its slot with a unit pending, when it ends expired, then the unit fails as expired and the run is finished', async () => {
    await given(event('RunSlotTaken', { run_id: run, website_id: site, schedule_id: null, expires_at: T1 }), started(run, 1), requested(first))
      .when(event('RunEnded', { run_id: run, website_id: site, schedule_id: null, reason: 'expired' }, { meta: { time: T1 } }))
      .then({
        rm_run_slots: [{ run_id: run, ended_at: T1, end_reason: 'expired' }],
        rm_run_units: [{ request_id: first, status: 'failed', error_kind: 'expired' }],
        rm_runs: [{ id: run, failed: 1, finished_at: T1 }],
      });
  });

  it('given two runs, when a unit of one is answered, then the other run counts nothing', async () => {
    const other = randomUUID();
    await given(started(), requested(first), started(other), requested(second, other))
      .when(answered(first))
      .then({ rm_runs: { columns: ['recorded'], where: { id: other }, rows: [{ recorded: 0 }] } });
  });
});
