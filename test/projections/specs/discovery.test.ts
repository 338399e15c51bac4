import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { discoveryProjection } from '../../../projections/discovery';
import { event, streamOf, projectionSpec } from '../../support/projection-spec';

const { org, site, given } = projectionSpec(discoveryProjection);
const job = streamOf('discovery');
const run = job.id;

const requested = job.on('PromptDiscoveryRequested', {
  run_id: run,
  website_id: site,
  name: 'Spring',
  sources: ['writer'],
  custom_instructions: null,
  locale: 'en',
  country: 'US',
  prompt_count_min: 5,
  prompt_count_max: 10,
});
const prompts = [
  { text: 'best crm?', topic: 'CRM', source: 'writer' },
  { text: 'cheap crm?', topic: null, source: 'writer' },
];
const completed = job.on('PromptDiscoveryCompleted', { run_id: run, prompts, unavailable_sources: [{ source: 'trends', reason: 'not configured' }] });

describe('discovery read model: prompt discovery runs, their suggestions and which were accepted', () => {
  it('given nothing, when a run is requested, then it is queued with its inputs and nothing suggested', async () => {
    await given()
      .when(requested)
      .then({
        rm_discovery_runs: [
          {
            id: run,
            organization_id: org,
            website_id: site,
            name: 'Spring',
            status: 'queued',
            sources: ['writer'],
            country: 'US',
            prompt_count_min: 5,
            prompt_count_max: 10,
            prompts: [],
            accepted: [],
          },
        ],
      });
  });

  it('given a run, when it completes, then it holds its suggestions and the sources it could not use', async () => {
    await given(requested)
      .when(completed, job.succeeded())
      .then({
        rm_discovery_runs: [{ id: run, status: 'succeeded', prompts, unavailable_sources: [{ source: 'trends', reason: 'not configured' }] }],
      });
  });

  it('given suggestions accepted, when more are accepted (one again), then the accepted list is each once, in order', async () => {
    await given(requested, completed, event('PromptDiscoveryAccepted', { run_id: run, indices: [1], prompt_ids: [randomUUID()] }))
      .when(event('PromptDiscoveryAccepted', { run_id: run, indices: [0, 1], prompt_ids: [randomUUID()] }))
      .then({ rm_discovery_runs: [{ id: run, accepted: [0, 1] }] });
  });
});
