import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { websitesProjection } from '../../../projections/websites';
import { event, projectionSpec, T0, T1 } from '../../support/projection-spec';

const { org, site, given } = projectionSpec(websitesProjection);
const other = randomUUID();

const created = (id: string, name: string) =>
  event(
    'WebsiteCreated',
    { website_id: id, name, url: `https://${name}.example/`, normalized_url: `${name}.example`, external_id: null },
    { meta: { website_id: id } },
  );

describe('websites read model: the websites of an organization', () => {
  it('given nothing, when a website is created, then it is listed active in the event organization', async () => {
    await given()
      .when(created(site, 'acme'))
      .then({
        rm_websites: [
          {
            id: site,
            organization_id: org,
            name: 'acme',
            url: 'https://acme.example/',
            normalized_url: 'acme.example',
            status: 'active',
            external_id: null,
            created_at: T0,
            updated_at: T0,
          },
        ],
      });
  });

  it('given a website, when it is paused and given an external id, then its row says both and updated_at moves', async () => {
    await given(created(site, 'acme'))
      .when(
        event('WebsiteStatusChanged', { website_id: site, status: 'paused' }),
        event('WebsiteExternalIdSet', { website_id: site, external_id: 'crm-7' }, { meta: { time: T1 } }),
      )
      .then({ rm_websites: [{ id: site, status: 'paused', external_id: 'crm-7', created_at: T0, updated_at: T1 }] });
  });

  it('given a website deleted, then it keeps its row marked deleted', async () => {
    await given(created(site, 'acme'))
      .when(event('WebsiteStatusChanged', { website_id: site, status: 'deleted' }))
      .then({ rm_websites: [{ id: site, status: 'deleted' }] });
  });

  it('given two websites, when one is paused, then the other stays active', async () => {
    await given(created(site, 'acme'), created(other, 'other'))
      .when(event('WebsiteStatusChanged', { website_id: site, status: 'paused' }))
      .then({
        rm_websites: {
          orderBy: 'name',
          rows: [
            { name: 'acme', status: 'paused' },
            { name: 'other', status: 'active' },
          ],
        },
      });
  });
});
