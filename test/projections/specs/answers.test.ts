import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { answersProjection } from '../../../projections/answers';
import { anAnswer } from '../../support/events';
import { event, projectionSpec } from '../../support/projection-spec';

const { site, given } = projectionSpec(answersProjection);
const other = randomUUID();
const prompt = randomUUID();
const rival = randomUUID();
const answer = randomUUID();

const websiteCreated = (id = site, name = 'Acme') =>
  event(
    'WebsiteCreated',
    { website_id: id, name, url: `https://${name.toLowerCase()}.example/`, normalized_url: `${name.toLowerCase()}.example`, external_id: null },
    { meta: { website_id: id } },
  );
const recorded = (text: string, over: { response_id?: string; website_id?: string; citations?: string[] } = {}) =>
  event(
    'ResponseRecorded',
    anAnswer({ response_id: over.response_id ?? answer, website_id: over.website_id ?? site, prompt_id: prompt }, text, {
      citations: over.citations ?? [],
    }),
    {
      stream: `response-${randomUUID()}`,
    },
  );
const rivalAdded = event(
  'CompetitorAdded',
  { competitor_id: rival, name: 'Rival', url: 'https://rival.example/', normalized_url: 'rival.example', identifiers: [] },
  { stream: `catalog-${site}` },
);

describe('answers read model: answers and what their analysis derives', () => {
  it('given a website, when an answer naming its brand is recorded, then it is stored with the mention and counts as mentioning the brand', async () => {
    await given(websiteCreated())
      .when(recorded('I would pick Acme for a small team.', { citations: ['https://www.acme.example/pricing?ref=x'] }))
      .then({
        rm_responses: [{ id: answer, website_id: site, text: 'I would pick Acme for a small team.', matched: { m: [[site, 1]], c: [site] } }],
        rm_content_answers: [{ response_id: answer, website_id: site, mentioned: true }],
        rm_content_cites: [{ response_id: answer, normalized_url: 'acme.example/pricing?ref=x' }],
        rm_fact_sites: [{ website_id: site, entities: [site] }],
      });
  });

  it('given an answer naming a company not tracked, when it is added as a competitor, then the stored answer is derived again with it', async () => {
    await given(websiteCreated(), recorded('Rival is better than Acme.'))
      .when(rivalAdded)
      .then({
        rm_analysis_entities: {
          columns: ['entity_id', 'slot', 'is_self'],
          orderBy: 'slot',
          rows: [
            { entity_id: site, slot: 0, is_self: true },
            { entity_id: rival, slot: 1, is_self: false },
          ],
        },
        rm_responses: [
          {
            id: answer,
            matched: {
              m: [
                [rival, 1],
                [site, 2],
              ],
              c: [],
            },
          },
        ],
        rm_fact_sites: [{ website_id: site, entities: [site, rival] }],
      });
  });

  it('given a competitor mentioned in an answer, when it is removed, then the answer no longer counts its mention and the brand is first', async () => {
    await given(websiteCreated(), rivalAdded, recorded('Rival is better than Acme.'))
      .when(event('CompetitorRemoved', { competitor_id: rival }, { stream: `catalog-${site}` }))
      .then({ rm_responses: [{ id: answer, matched: { m: [[site, 1]], c: [] } }], rm_fact_sites: [{ website_id: site, entities: [site] }] });
  });

  it('given an answer, when the same answer is recorded again, then it is stored once', async () => {
    await given(websiteCreated(), recorded('Acme.'))
      .when(recorded('Acme.'))
      .then({ rm_responses: [{ id: answer }], rm_content_answers: [{ response_id: answer }] });
  });

  it('given two websites, when a competitor is added to one, then the other website answers and entities are untouched', async () => {
    const theirs = randomUUID();
    await given(websiteCreated(), websiteCreated(other, 'Other'), recorded('Rival and Other.', { response_id: theirs, website_id: other }))
      .when(rivalAdded)
      .then({
        rm_responses: [{ id: theirs, matched: { m: [[other, 1]], c: [] } }],
        rm_fact_sites: { columns: ['entities'], where: { website_id: other }, rows: [{ entities: [other] }] },
      });
  });
});
