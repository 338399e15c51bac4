import { describe, it } from 'vitest';
import { seoProjection } from '../../../projections/seo';
import { streamOf, projectionSpec, T0, T1 } from '../../support/projection-spec';

const { org, site, given } = projectionSpec(seoProjection);
const seo = streamOf('seo');
const job = seo.id;

const requested = seo.on('SeoRecommendationsRequested', {
  job_id: job,
  website_id: site,
  request_id: 'r1',
  source: 'url',
  url: 'https://acme.example/pricing',
  page: { title: 'Pricing', meta_description: null, headings: [], text: 'Our prices', schema_types: [] },
});
const recommendation = {
  id: 'rec-1',
  category: 'title',
  severity: 'high' as const,
  title: 'Name the product',
  detail: 'The title lacks it',
  excerpt: 'Pricing',
};

describe('seo read model: SEO recommendation jobs and their recommendations', () => {
  it('given nothing, when recommendations are requested, then the job is queued for the website', async () => {
    await given()
      .when(requested)
      .then({
        rm_seo_jobs: [
          {
            id: job,
            organization_id: org,
            website_id: site,
            request_id: 'r1',
            source: 'url',
            url: 'https://acme.example/pricing',
            status: 'queued',
            recommendations: null,
            created_at: T0,
          },
        ],
      });
  });

  it('given a running job, when it produces recommendations and succeeds, then they are held with the completion time', async () => {
    await given(requested, seo.started())
      .when(seo.on('SeoRecommendationsProduced', { job_id: job, recommendations: [recommendation] }), seo.succeeded(T1))
      .then({ rm_seo_jobs: [{ id: job, status: 'succeeded', recommendations: [recommendation], completed_at: T1 }] });
  });

  it('given a job, when it fails, then it is failed with the message', async () => {
    await given(requested)
      .when(seo.failed('engine', 'the engine refused'))
      .then({ rm_seo_jobs: [{ id: job, status: 'failed', error: 'the engine refused' }] });
  });

  it('given a job, when another kind of job with the same id ends, then this one is untouched', async () => {
    await given(requested)
      .when(streamOf('discovery', job).succeeded())
      .then({ rm_seo_jobs: [{ id: job, status: 'queued', completed_at: null }] });
  });
});
