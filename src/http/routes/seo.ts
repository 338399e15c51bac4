import { z } from 'zod';
import { SeoJobView, SeoSubmittedView } from '../../../queries/seo/views';
import { getSeoRecommendations, SubmitSeoRecommendations, submitSeoRecommendations } from '../../app/seo';
import { route, Uuid } from '../route';

const TAG = 'seo recommendations';

/** SEO recommendation jobs: thin adapters over src/app/seo.ts. */
export const seoRoutes = [
  route({
    method: 'POST',
    url: '/api/v1/seo/recommendations',
    summary:
      'Submit a draft or a public HTTPS page for recommendations: a saved job to poll (same request_id and input: the same job; other input: 409)',
    tag: TAG,
    body: SubmitSeoRecommendations,
    status: 202,
    responses: { 202: SeoSubmittedView },
    handler: (ctx) => submitSeoRecommendations(ctx, ctx.body),
  }),
  route({
    method: 'GET',
    url: '/api/v1/seo/recommendations/:job_id',
    summary: 'An SEO recommendations job: its status and, once it succeeded, its recommendations',
    tag: TAG,
    params: z.object({ job_id: Uuid }),
    query: z.strictObject({ website_id: Uuid }),
    responses: { 200: SeoJobView },
    handler: (ctx) => getSeoRecommendations(ctx, ctx.params.job_id, ctx.query.website_id),
  }),
];
