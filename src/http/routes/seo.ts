import { z } from 'zod';
import { SeoJobView, SeoSubmittedView } from '../../../queries/seo/views';
import { getSeoRecommendations, SubmitSeoRecommendations, submitSeoRecommendations } from '../../app/seo';
import { routeGroup, Uuid, WebsiteQuery } from '../route';

const api = routeGroup({ tag: 'seo recommendations' });

/** SEO recommendation jobs: thin adapters over src/app/seo.ts. */
export const seoRoutes = [
  api.post('/api/v1/seo/recommendations', {
    summary:
      'Submit a draft or a public HTTPS page for recommendations: a saved job to poll (same request_id and input: the same job; other input: 409)',
    body: SubmitSeoRecommendations,
    status: 202,
    answer: SeoSubmittedView,
    handler: (ctx) => submitSeoRecommendations(ctx, ctx.body),
  }),
  api.get('/api/v1/seo/recommendations/:job_id', {
    summary: 'An SEO recommendations job: its status and, once it succeeded, its recommendations',
    params: z.object({ job_id: Uuid }),
    query: WebsiteQuery,
    answer: SeoJobView,
    handler: (ctx) => getSeoRecommendations(ctx, ctx.params.job_id, ctx.query.website_id),
  }),
];
