import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { contentProjection } from '../../../projections/content';
import { event, projectionSpec, T0, T1 } from '../../support/projection-spec';

const { org, site, given } = projectionSpec(contentProjection);
const item = randomUUID();
const sheet = randomUUID();
const column = randomUUID();

const tracked = (id: string, title: string | null = 'Pricing page', website_id = site) =>
  event('ContentTracked', {
    content_id: id,
    website_id,
    url: 'https://acme.example/pricing',
    normalized_url: 'acme.example/pricing',
    type: 'manual',
    title,
    sheet_id: sheet,
    fields: { [column]: ['a'] },
  } as never);

describe('content read model: the items of a website content hub, its sheets and columns', () => {
  it('given nothing, when an item is tracked, then it is listed with its URL, sheet and fields', async () => {
    await given()
      .when(tracked(item))
      .then({
        rm_content: [
          {
            content_id: item,
            organization_id: org,
            website_id: site,
            title: 'Pricing page',
            url: 'https://acme.example/pricing',
            normalized_url: 'acme.example/pricing',
            type: 'manual',
            sheet_id: sheet,
            fields: { [column]: ['a'] },
            created_at: T0,
          },
        ],
      });
  });

  it('given nothing, when an item is tracked and retitled in one batch, then the row has the new title', async () => {
    await given()
      .when(tracked(item), event('ContentTitleChanged', { content_id: item, website_id: site, title: 'Plans' }, { meta: { time: T1 } }))
      .then({ rm_content: [{ content_id: item, title: 'Plans', updated_at: T1 }] });
  });

  it('given an item erased (its title gone), when its tracking is applied again in a rebuild, then no row is written', async () => {
    await given().when(tracked(item, null)).then({ rm_content: [] });
  });

  it('given two items of two websites, when one is deleted, then only it is gone', async () => {
    const theirs = randomUUID();
    const other = randomUUID();
    await given(tracked(item), tracked(theirs, 'Home', other))
      .when(event('ContentDeleted', { content_id: item, website_id: site }))
      .then({ rm_content: [{ content_id: theirs, website_id: other }] });
  });

  it('given a sheet with a multi-select column, when options are added, then the column lists them after the first ones', async () => {
    await given(
      event('ContentSheetCreated', { website_id: site, sheet_id: sheet, name: 'Blog', type: 'sheet' }),
      event('ContentColumnCreated', { website_id: site, sheet_id: sheet, column_id: column, name: 'Tags', type: 'multi_select', options: ['a'] }),
    )
      .when(event('ContentColumnOptionsAdded', { website_id: site, sheet_id: sheet, column_id: column, options: ['b', 'c'] }))
      .then({
        rm_content_sheets: [{ sheet_id: sheet, website_id: site, name: 'Blog', type: 'sheet' }],
        rm_content_columns: [{ column_id: column, name: 'Tags', options: ['a', 'b', 'c'] }],
      });
  });
});
