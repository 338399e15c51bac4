/**
 * `content`: the content hub over HTTP on the answers dataset (`--quick`: its small version): tracking 500 new URLs in
 * one call, the listing (page of 40, 90 days, with citation figures) on a website with 10,000 tracked items
 * (`--quick`: 2,000), unfiltered and filtered, and the per-prompt breakdown of one item.
 */
import { answersBench } from './answers';
import { info, median, postOk, report, warmedUp } from './lib';

const DAY_MS = 86_400_000;

export const content = answersBench({
  name: 'content',
  about: 'content hub: tracking 500 URLs, the listing with citation figures over 10,000 items, the per-prompt breakdown',
  async run({ ds, quick }) {
    const s = ds.server;
    const db = s.rt.database.db;
    const site = ds.site.websiteId;

    // tracking 500 new URLs per call (new pages each time: the skip path is cheaper)
    const rounds = quick ? 10 : 20;
    let made = 0;
    const track = await warmedUp(
      rounds,
      async (i) => {
        const urls = Array.from({ length: 500 }, (_, k) => ({ url: `https://bench-${i}.example.org/articles/page-${k}?utm_source=x` }));
        const r = await postOk(s, '/api/v1/content/track', { website_id: site, urls });
        made += r.created_count;
      },
      2,
    );
    report('content_track_500_ms', track.p95, 'ms', {
      goal: { op: '<=', value: 250 },
      note: `p95 of ${rounds} calls (after 2 not counted) tracking 500 new URLs each (answered once the content read model has them); median ${track.p50.toFixed(1)} ms; ${made} items made`,
    });

    // the website's items: the URLs its answers cite most (so the figures are not all zero), then made-up pages
    const target = quick ? 2000 : 10_000;
    const cited = (await db('rm_content_cites')
      .where('website_id', site)
      .groupBy('normalized_url')
      .orderByRaw('count(*) desc')
      .limit(2000)
      .pluck('normalized_url')) as string[];
    const urls = [...cited, ...Array.from({ length: Math.max(0, target - made - cited.length) }, (_, k) => `filler.example.com/p/${k}`)];
    for (let i = 0; i < urls.length; i += 500) {
      await postOk(s, '/api/v1/content/track', { website_id: site, urls: urls.slice(i, i + 500).map((url) => ({ url })) });
    }
    const items = Number((await db('rm_content').where('website_id', site).count<{ n: string }[]>('* as n'))[0].n);
    await db.raw('analyze rm_content; analyze rm_content_cites; analyze rm_content_answers');

    const newest = (await db('rm_content_answers').where('website_id', site).max('run_at as m').first()) as { m: Date };
    const last = newest.m.toISOString().slice(0, 10);
    const from = new Date(Date.parse(`${last}T00:00:00Z`) - 89 * DAY_MS).toISOString().slice(0, 10);
    const prompts = ds.site.ids.promptIds.filter((_, i) => i % 3 === 0).slice(0, 30);
    const cases = {
      unfiltered: { filters: { start_date: from, end_date: last } },
      filtered: {
        filters: {
          start_date: from,
          end_date: last,
          models: ['chatgpt', 'perplexity', 'gemini'],
          location_ids: ds.site.ids.locationIds.slice(0, 2),
          prompt_ids: prompts,
        },
        mentioned: true,
        content_type: 'external',
      },
    };
    const n = quick ? 30 : 100;
    // the page with the most cited items: the newest 40 are the last tracked (fillers); page through to cited ones
    const citedPage = Math.floor((items - cited.length) / 40);
    for (const [name, c] of Object.entries(cases)) {
      let body: any;
      const t = await warmedUp(n, async (i) => {
        body = await postOk(s, '/api/v1/content', { website_id: site, ...c, page_size: 40, page_num: i % 2 ? citedPage : 0 });
      });
      report(`content_list_ms_${name}`, t.p95, 'ms', {
        goal: { op: '<=', value: name === 'unfiltered' ? 50 : 80 },
        note: `p95 of ${n} (alternately the first page and a page of cited items), ${items} items, ${body.content[0]?.total_responses ?? 0} answers selected; median ${t.p50.toFixed(1)} ms`,
      });
    }

    const top = (await db('rm_content as c')
      .join('rm_content_cites as x', function () {
        this.on('x.website_id', 'c.website_id').andOn('x.normalized_url', 'c.normalized_url');
      })
      .where('c.website_id', site)
      .groupBy('c.content_id')
      .orderByRaw('count(*) desc')
      .first('c.content_id')) as { content_id: string };
    let breakdown: any;
    const p = await warmedUp(n, async () => {
      breakdown = await postOk(s, '/api/v1/content/prompts', {
        website_id: site,
        content_id: top.content_id,
        filters: cases.unfiltered.filters,
      });
    });
    report('content_prompts_ms', p.p95, 'ms', {
      goal: { op: '<=', value: 30 },
      note: `p95 of ${n}: the most cited item, 90 days, ${breakdown.prompts.length} prompts citing it; median ${p.p50.toFixed(1)} ms`,
    });
    info(`content: ${ds.total} answers in the dataset; median of the track calls ${median([track.p50]).toFixed(1)} ms`);
  },
});
