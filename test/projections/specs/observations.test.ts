import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { observationsProjection } from '../../../projections/observations';
import { event, projectionSpec } from '../../support/projection-spec';

const { site, given } = projectionSpec(observationsProjection);
const response = randomUUID();
const prompt = randomUUID();
const entity = randomUUID();
const attribute = randomUUID();

const observation = (score: number | null, positive = true) => ({
  observation_id: randomUUID(),
  entity_id: entity,
  attribute_id: attribute,
  positive,
  score,
  text_span: 'fast',
});
const recorded = (observations: ReturnType<typeof observation>[], website_id = site) =>
  event('ObservationsRecorded', {
    response_id: response,
    website_id,
    prompt_id: prompt,
    location_id: null,
    schedule_id: null,
    model: 'chatgpt',
    observed_at: '2026-03-01T10:00:00.750Z',
    extractor: 'rules',
    observations,
  });

describe('observations read model: what answers said about an entity for an attribute', () => {
  it('given nothing, when an answer observations are recorded, then each is a row of the website at the answer time to the second', async () => {
    const o = observation(0.5);
    await given()
      .when(recorded([o]))
      .then({
        rm_observations: [
          {
            id: o.observation_id,
            website_id: site,
            response_id: response,
            prompt_id: prompt,
            entity_id: entity,
            attribute_id: attribute,
            positive: true,
            score: 0.5,
            model: 'chatgpt',
            created_at: '2026-03-01T10:00:00.000Z',
          },
        ],
      });
  });

  it('given observations, then the intensity is |score| to 3 decimals, and 1 for an unscored one', async () => {
    await given()
      .when(recorded([observation(-0.12345, false), observation(null)]))
      .then({
        rm_observations: {
          columns: ['score', 'intensity'],
          orderBy: 'intensity',
          rows: [
            { score: -0.12345, intensity: 0.123 },
            { score: null, intensity: 1 },
          ],
        },
      });
  });

  it('given observations recorded, when the same are recorded again, then each is held once', async () => {
    const o = observation(0.5);
    await given(recorded([o]))
      .when(recorded([o]))
      .then({ rm_observations: [{ id: o.observation_id }] });
  });

  it('given another website observations, when this website records its own, then each website keeps its own rows', async () => {
    const other = randomUUID();
    await given(recorded([observation(1)], other))
      .when(recorded([observation(1)]))
      .then({ rm_observations: { columns: ['website_id'], where: { website_id: other }, rows: [{ website_id: other }] } });
  });
});
