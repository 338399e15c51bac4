import { ENGINE_IDS } from '../../analysis/ai-crawlers';
import { AiAccessCheckBody, AiAccessReport, checkAiAccessFor, ORG_CHECKS_PER_MIN } from '../../app/ai-access';
import { routeGroup } from '../route';

export { AiAccessReport };

const api = routeGroup({ tag: 'ai-access' });

export const aiAccessRoutes = [
  api.post('/api/v1/ai-access/check', {
    summary:
      `Can AI answer engines' crawlers read a domain? For eight engines (${ENGINE_IDS.join(', ')}) and two kinds of agent ` +
      '(conversational: user-triggered fetchers and answer-search indexers; training), `robots` says robots.txt allows every ' +
      'documented agent of that kind to fetch "/", `http` says GET https://<domain>/ with that agent\'s User-Agent answers ' +
      '2xx/3xx. status: accessible = every flag true; blocked = no engine has conversational access (robots and http both ' +
      'true); partial = anything between. A domain that does not resolve or answer is blocked with every flag false and the ' +
      "error code in the fingerprints. Agents come from the vendors' published crawler documentation (infra/ai-crawlers.json); " +
      'a kind with no documented agent is judged by the robots "*" group and aivis\' own User-Agent (`<engine>.default`). ' +
      `Any key of the organization; ${ORG_CHECKS_PER_MIN} checks per minute per organization (429 with Retry-After); ` +
      'an invalid domain is refused with 400 before the budget is spent.',
    body: AiAccessCheckBody,
    answer: AiAccessReport,
    handler: (ctx) => checkAiAccessFor(ctx, ctx.body),
  }),
];
