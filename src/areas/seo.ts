import { seoProjection } from '../../projections/seo';
import { seoRoutes } from '../http/routes/seo';
import { seoJob } from '../workers/seo';
import { entryOf } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** SEO recommendations jobs. */
export const seo: AreaManifest<'seo'> = {
  readModels: { seo: seoProjection },
  routes: seoRoutes,
  jobs: { seo: { requested: 'SeoRecommendationsRequested', spec: (deps) => seoJob(deps) } },
  feed: {
    SeoRecommendationsRequested: entryOf('seo_recommendation_job', 'created', (e) => [e.data.job_id], 'website_id'),
    SeoRecommendationsProduced: entryOf('seo_recommendation_job', 'completed', (e) => [e.data.job_id]),
  },
};
