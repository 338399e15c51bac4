import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { aiValueProjection } from '../../../projections/ai-value';
import { event, projectionSpec, T1 } from '../../support/projection-spec';

const { org, site, given } = projectionSpec(aiValueProjection);
const other = randomUUID();
const topic = randomUUID();

const economics = (e: { monthly_searches: number; cpc_usd: number } | null, website = site, time = T1) =>
  event('TopicEconomicsSet', { topic_id: topic, economics: e }, { stream: `catalog-${website}`, meta: { time } });
const computed = (computed_at: string, measured_responses: number, valuation: Record<string, unknown> | null = null) =>
  event('AiValueComputed', {
    job_id: randomUUID(),
    website_id: site,
    computed_at,
    facts_version: 'f1',
    measured_responses,
    assumptions_version: 'a1',
    valuation,
  });

describe('ai-value read model: the latest AI search value of each website and its topics economics', () => {
  it('given nothing, when a topic economics are set, then they are the topic own and the website notes the change', async () => {
    await given()
      .when(economics({ monthly_searches: 1200, cpc_usd: 2.5 }))
      .then({
        rm_topic_economics: [{ topic_id: topic, website_id: site, monthly_searches: '1200', cpc_usd: 2.5, updated_at: T1 }],
        rm_ai_values: [{ website_id: site, organization_id: org, economics_changed_at: T1, checked_at: null }],
      });
  });

  it('given a topic economics, when they are set to null, then the topic row is removed (the defaults apply again)', async () => {
    await given(economics({ monthly_searches: 1200, cpc_usd: 2.5 }))
      .when(economics(null))
      .then({ rm_topic_economics: [] });
  });

  it('given a check, when an older computation ends late, then the newer check stays', async () => {
    await given(computed('2026-03-02T00:00:00.000Z', 40))
      .when(computed('2026-03-01T00:00:00.000Z', 10))
      .then({
        rm_ai_values: [{ website_id: site, checked_at: '2026-03-02T00:00:00.000Z', measured_responses: 40, computed_at: null, valuation: null }],
      });
  });

  it('given a computation whose figure is of an older shape, then it counts as a check without a figure', async () => {
    await given()
      .when(computed('2026-03-02T00:00:00.000Z', 40, { total_usd: 10 }))
      .then({ rm_ai_values: [{ website_id: site, checked_at: '2026-03-02T00:00:00.000Z', computed_at: null, valuation: null }] });
  });

  it('given two websites, when one website economics change, then the other website is untouched', async () => {
    await given(
      event(
        'AiValueRequested',
        { job_id: randomUUID(), website_id: other, reason: 'manual', requested_at: '2026-03-01T00:00:00.000Z' },
        { meta: { website_id: other } },
      ),
    )
      .when(economics({ monthly_searches: 10, cpc_usd: 1 }))
      .then({
        rm_ai_values: {
          columns: ['website_id', 'requested_at', 'economics_changed_at'],
          where: { website_id: other },
          rows: [{ website_id: other, requested_at: '2026-03-01T00:00:00.000Z', economics_changed_at: null }],
        },
      });
  });
});
