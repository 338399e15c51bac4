import { seoProjection } from '../../projections/seo';
import { seoRoutes } from '../http/routes/seo';
import { seoJob } from '../workers/seo';
import { entry } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** SEO recommendations jobs. */
export const seo: AreaManifest<'seo'> = {
  readModels: { seo: seoProjection },
  routes: seoRoutes,
  jobs: { seo: { requested: 'SeoRecommendationsRequested', spec: (deps) => seoJob(deps) } },
  feed: {
    SeoRecommendationsRequested: (e) => entry('seo_recommendation_job', 'created', [e.data.job_id], e.data.website_id),
    SeoRecommendationsProduced: (e) => entry('seo_recommendation_job', 'completed', [e.data.job_id]),
  },
};
