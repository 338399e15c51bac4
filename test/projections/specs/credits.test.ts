import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { creditsProjection } from '../../../projections/credits';
import { event, projectionSpec } from '../../support/projection-spec';

const { org, site, given } = projectionSpec(creditsProjection);
const run = randomUUID();

const used = (credits: number, time: string, over: { id?: string; organization_id?: string } = {}) =>
  event(
    'CreditsUsed',
    { website_id: site, model: 'chatgpt', credits, input_tokens: null, output_tokens: null, run_id: run, response_id: null, purpose: 'response' },
    { id: over.id, meta: { time, ...(over.organization_id && { organization_id: over.organization_id }) } },
  );

describe('credits read model: credit events and their daily and hourly totals', () => {
  it('given nothing, when an engine answer uses credits, then the event is kept and counted in its day and its hour', async () => {
    await given()
      .when(used(2, '2026-03-01T10:15:00.000Z'))
      .then({
        rm_credit_events: [
          {
            organization_id: org,
            website_id: site,
            kind: 'response',
            credits: '2',
            ref_id: run,
            model: 'chatgpt',
            occurred_at: '2026-03-01T10:15:00.000Z',
          },
        ],
        rm_credit_days: [{ organization_id: org, website_key: site, bucket: '2026-03-01T00:00:00.000Z', kind: 'response', credits: '2', events: 1 }],
        rm_credit_hours: [{ bucket: '2026-03-01T10:00:00.000Z', credits: '2', events: 1 }],
      });
  });

  it('given credits used in one hour, when more are used the next hour, then the day sums both and each hour its own', async () => {
    await given(used(2, '2026-03-01T10:15:00.000Z'))
      .when(
        used(1.5, '2026-03-01T11:05:00.000Z'),
        event(
          'CreditsCharged',
          { kind: 'pitch', credits: 10, website_id: null, ref_id: 'job-1', model: null },
          { meta: { time: '2026-03-01T11:30:00.000Z' } },
        ),
      )
      .then({
        rm_credit_days: [
          { website_key: '', kind: 'pitch', credits: '10', events: 1 },
          { website_key: site, kind: 'response', credits: '3.5', events: 2 },
        ],
        rm_credit_hours: {
          columns: ['bucket', 'credits'],
          where: { kind: 'response' },
          rows: [
            { bucket: '2026-03-01T10:00:00.000Z', credits: '2' },
            { bucket: '2026-03-01T11:00:00.000Z', credits: '1.5' },
          ],
        },
        // the organization's own totals: a website's and none's together, per kind
        rm_credit_org_days: [
          { organization_id: org, bucket: '2026-03-01T00:00:00.000Z', kind: 'pitch', credits: '10', events: 1 },
          { organization_id: org, bucket: '2026-03-01T00:00:00.000Z', kind: 'response', credits: '3.5', events: 2 },
        ],
        rm_credit_org_hours: {
          columns: ['bucket', 'kind', 'credits'],
          rows: [
            { bucket: '2026-03-01T10:00:00.000Z', kind: 'response', credits: '2' },
            { bucket: '2026-03-01T11:00:00.000Z', kind: 'pitch', credits: '10' },
            { bucket: '2026-03-01T11:00:00.000Z', kind: 'response', credits: '1.5' },
          ],
        },
      });
  });

  it('given nothing, when two websites of the organization use credits in one hour, then the organization total sums them', async () => {
    const other = randomUUID();
    await given()
      .when(
        // in one batch: the organization's row of the hour gets both websites' at once
        used(2, '2026-03-01T10:15:00.000Z'),
        event(
          'CreditsUsed',
          {
            website_id: other,
            model: 'chatgpt',
            credits: 0.5,
            input_tokens: null,
            output_tokens: null,
            run_id: run,
            response_id: null,
            purpose: 'response',
          },
          { meta: { time: '2026-03-01T10:45:00.000Z' } },
        ),
      )
      .then({
        rm_credit_hours: {
          columns: ['website_key', 'credits'],
          orderBy: 'credits',
          rows: [
            { website_key: other, credits: '0.5' },
            { website_key: site, credits: '2' },
          ],
        },
        rm_credit_org_hours: [{ organization_id: org, bucket: '2026-03-01T10:00:00.000Z', kind: 'response', credits: '2.5', events: 2 }],
        rm_credit_org_days: [{ credits: '2.5', events: 2 }],
      });
  });

  it('given a credit event, when the same event is delivered again, then nothing is added', async () => {
    const id = randomUUID();
    await given(used(2, '2026-03-01T10:15:00.000Z', { id }))
      .when(used(2, '2026-03-01T10:15:00.000Z', { id }))
      .then({ rm_credit_events: [{ id }], rm_credit_days: [{ credits: '2', events: 1 }], rm_credit_org_days: [{ credits: '2', events: 1 }] });
  });

  it('given another organization credits, when this one uses credits, then each organization has its own totals', async () => {
    const theirs = randomUUID();
    await given(used(5, '2026-03-01T10:15:00.000Z', { organization_id: theirs }))
      .when(used(2, '2026-03-01T10:20:00.000Z'))
      .then({
        rm_credit_days: { columns: ['credits'], where: { organization_id: org }, rows: [{ credits: '2' }] },
        rm_credit_org_days: { columns: ['credits'], where: { organization_id: org }, rows: [{ credits: '2' }] },
      });
  });

  it('given nothing, when an operator grants credits, then the grant is listed for the organization', async () => {
    await given()
      .when(event('CreditsGranted', { grant_id: 'g1', credits: 100, reason: 'pilot' }))
      .then({ rm_credit_grants: [{ grant_id: 'g1', organization_id: org, credits: '100', reason: 'pilot' }] });
  });
});
