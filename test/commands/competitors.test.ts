import { describe, expect, it } from 'vitest';
import { decideAddCompetitor } from '../../commands/catalog/add-competitor';
import { Catalog } from '../../commands/catalog/catalog';
import { decideRemoveCompetitor } from '../../commands/catalog/remove-competitor';
import { decideUpdateCompetitor } from '../../commands/catalog/update-competitor';
import { given } from '../support/given';
import { competitorAdded, W } from './catalog-events';

const site = 'https://acme.example.com/shop';

describe('add competitor', () => {
  it('given an empty catalogue, when a competitor is added, then CompetitorAdded with its normalized URL and unique identifiers', () => {
    given(Catalog)
      .when((s) =>
        decideAddCompetitor(s, {
          website_id: W,
          competitor_id: 'c1',
          website_url: site,
          name: 'Rival',
          url: 'https://www.Rival.example.net/?utm_source=x',
          identifiers: ['R', 'R', 'RivalCo'],
        }),
      )
      .then([
        {
          type: 'CompetitorAdded',
          data: {
            competitor_id: 'c1',
            name: 'Rival',
            url: 'https://www.Rival.example.net/?utm_source=x',
            normalized_url: 'rival.example.net/',
            identifiers: ['R', 'RivalCo'],
          },
        },
      ]);
  });

  it("given the website's own URL or a page below it, then invalid naming url", () => {
    for (const url of ['acme.example.com/shop', 'https://www.acme.example.com/shop/deals']) {
      given(Catalog)
        .when((s) => decideAddCompetitor(s, { website_id: W, competitor_id: 'c1', website_url: site, name: 'Self', url }))
        .then({ kind: 'invalid', message: "url: a competitor must not be the website's own URL or a page below it" });
    }
  });

  it('given a competitor with the same normalized URL, then conflict; once removed, the URL can be added again', () => {
    const added = competitorAdded('c1', 'https://rival.example.net');
    given(Catalog, added)
      .when((s) =>
        decideAddCompetitor(s, { website_id: W, competitor_id: 'c2', website_url: site, name: 'Again', url: 'http://www.rival.example.net/' }),
      )
      .then({
        kind: 'conflict',
        message: 'Competitor already exists',
        details: { existing: { id: 'c1', name: 'c1', url: 'https://rival.example.net', normalized_url: 'rival.example.net/', identifiers: [] } },
      });
    given(Catalog, added, { type: 'CompetitorRemoved', data: { competitor_id: 'c1' } })
      .when((s) => decideAddCompetitor(s, { website_id: W, competitor_id: 'c2', website_url: site, name: 'Again', url: 'rival.example.net' }))
      .then((events) => expect(events.map((e) => e.type)).toEqual(['CompetitorAdded']));
  });
});

describe('update competitor', () => {
  it('given a competitor, when renamed and re-identified, then one event per change', () => {
    given(Catalog, competitorAdded('c1'))
      .when((s) => decideUpdateCompetitor(s, 'c1', { website_id: W, name: 'New', identifiers: ['A', 'B', 'A'] }))
      .then([
        { type: 'CompetitorRenamed', data: { competitor_id: 'c1', name: 'New' } },
        { type: 'CompetitorIdentifiersChanged', data: { competitor_id: 'c1', identifiers: ['A', 'B'] } },
      ]);
  });

  it('given the same values, then nothing is appended and the competitor id is answered', () => {
    const { result } = given(Catalog, competitorAdded('c1'))
      .when((s) => decideUpdateCompetitor(s, 'c1', { website_id: W, name: 'c1', identifiers: [] }))
      .then([]);
    expect(result).toEqual({ id: 'c1' });
  });

  it('given a removed or unknown competitor, then not found', () => {
    given(Catalog, competitorAdded('c1'), { type: 'CompetitorRemoved', data: { competitor_id: 'c1' } })
      .when((s) => decideUpdateCompetitor(s, 'c1', { website_id: W, name: 'X' }))
      .then({ kind: 'not_found', message: 'Competitor not found' });
    given(Catalog)
      .when((s) => decideRemoveCompetitor(s, 'nope'))
      .then({ kind: 'not_found', message: 'Competitor not found' });
  });
});

describe('remove competitor', () => {
  it('given a competitor, when removed, then CompetitorRemoved; a second remove is not found', () => {
    given(Catalog, competitorAdded('c1'))
      .when((s) => decideRemoveCompetitor(s, 'c1'))
      .then([{ type: 'CompetitorRemoved', data: { competitor_id: 'c1' } }]);
    given(Catalog, competitorAdded('c1'), { type: 'CompetitorRemoved', data: { competitor_id: 'c1' } })
      .when((s) => decideRemoveCompetitor(s, 'c1'))
      .then({ kind: 'not_found', message: 'Competitor not found' });
  });
});
