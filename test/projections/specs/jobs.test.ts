import { describe, it } from 'vitest';
import { jobsProjection } from '../../../projections/jobs';
import { JOB_KINDS } from '../../../src/areas';
import { projectionSpec, streamOf, T0, T1 } from '../../support/projection-spec';

const { org, site, given } = projectionSpec(jobsProjection(JOB_KINDS));
const probe = streamOf('probe');
const job = probe.id;
const T2 = '2026-03-03T00:00:00.000Z';

const requested = (p = probe) =>
  p.on('ProbeRequested', { job_id: p.id, website_id: site, steps: 1, step_ms: 0, fail_at_step: null, allowance: null });
const started = probe.started(T1);

describe('jobs read model: every job and where it stands', () => {
  it('given nothing, when a job is requested, then it is queued with its kind, stream, organization and website', async () => {
    await given()
      .when(requested())
      .then({
        rm_jobs: [
          {
            id: job,
            kind: 'probe',
            stream_id: probe.stream,
            organization_id: org,
            website_id: site,
            status: 'queued',
            requested_at: T0,
            started_at: null,
            finished_at: null,
          },
        ],
      });
  });

  it('given a queued job, when it starts and then succeeds, then it is succeeded with both times', async () => {
    await given(requested())
      .when(started, probe.succeeded(T2))
      .then({ rm_jobs: [{ id: job, status: 'succeeded', started_at: T1, finished_at: T2, updated_at: T2 }] });
  });

  it('given a running job, when it fails, then it is failed with the kind and message of the error', async () => {
    await given(requested(), started)
      .when(probe.failed('internal', 'step 1 kept throwing', T2))
      .then({ rm_jobs: [{ id: job, status: 'failed', error_kind: 'internal', error: 'step 1 kept throwing', finished_at: T2 }] });
  });

  it('given a finished job, when a late start arrives, then it stays finished', async () => {
    await given(requested(), probe.succeeded())
      .when(started)
      .then({ rm_jobs: [{ id: job, status: 'succeeded', started_at: null }] });
  });

  it('given two jobs, when one starts, then the other stays queued; an event on a stream that is no job is ignored', async () => {
    const other = streamOf('probe');
    await given(requested(), requested(other))
      .when(started, { ...other.started(), stream: `notajob-${other.id}` })
      .then({
        rm_jobs: {
          columns: ['id', 'status'],
          orderBy: 'status',
          rows: [
            { id: other.id, status: 'queued' },
            { id: job, status: 'running' },
          ],
        },
      });
  });
});
