import { describe, expect, it } from 'vitest';
import { parseDraft, parseHtmlPage, recommend, type SeoContext, type SeoPage } from '../../src/analysis/seo';

/**
 * Every kind of SEO recommendation (spec, SEO recommendations; docs/api/seo.md): given a page and the
 * website's data, each check gives its category, severity and the excerpt of the page it concerns (null when it
 * concerns what the page lacks).
 */

const none: SeoContext = { brand: 'Acme', prompts: [], competitorGaps: new Map(), facts: [] };
const html = (head: string, body: string) => parseHtmlPage(`<!doctype html><html><head>${head}</head><body>${body}</body></html>`);
const GOOD_TITLE = '<title>Running shoes for flat feet: a guide</title>';
const GOOD_META = `<meta name="description" content="${'Stability running shoes for flat feet, chosen by Acme runners: what to look for. '.slice(0, 100)}">`;
const FAQ_LD = '<script type="application/ld+json">{"@context":"https://schema.org","@type":["Product","FAQPage"]}</script>';
const GOOD_BODY =
  '<h1>Running shoes for flat feet</h1><p>Acme makes stability shoes.</p><h2>Do I need arch support?</h2><p>Yes.</p><h2>Are stability shoes heavier?</h2><p>A little.</p>';
const byCategory = (page: SeoPage, source: 'url' | 'draft', ctx: SeoContext = none) =>
  recommend('job-1', page, ctx, source).reduce<Record<string, { severity: string; excerpt: string | null; title: string }[]>>((acc, r) => {
    (acc[r.category] ??= []).push({ severity: r.severity, excerpt: r.excerpt, title: r.title });
    return acc;
  }, {});

describe('SEO recommendations: the structure checks', () => {
  it("given a fetched page, then its text is what the body shows: the head's title is kept apart and never quoted as a sentence", () => {
    const page = html(`${GOOD_TITLE}<style>p{}</style>`, '<header>Menu</header><h1>Running shoes</h1><p>Acme makes shoes.</p>');
    expect(page.title).toBe('Running shoes for flat feet: a guide');
    expect(page.text.split('\n')).toEqual(['Menu', 'Running shoes', 'Acme makes shoes.']);
  });

  it('given a well-built page naming the brand, with FAQ and FAQPage markup, then no structure recommendation', () => {
    const page = html(GOOD_TITLE + GOOD_META + FAQ_LD, GOOD_BODY);
    expect(recommend('job-1', page, none, 'url')).toEqual([]);
  });

  it('given titles missing, too long and too short, then `title` high with no excerpt, or low with the title as excerpt', () => {
    expect(byCategory(html(GOOD_META + FAQ_LD, GOOD_BODY), 'url').title).toEqual([
      { severity: 'high', excerpt: null, title: 'The page has no title' },
    ]);
    const long = 'Running shoes for flat feet, stability, arch support and everything else';
    expect(byCategory(html(`<title>${long}</title>${GOOD_META}${FAQ_LD}`, GOOD_BODY), 'url').title).toEqual([
      { severity: 'low', excerpt: long, title: 'The title is longer than 60 characters' },
    ]);
    expect(byCategory(html(`<title>Shoes</title>${GOOD_META}${FAQ_LD}`, GOOD_BODY), 'url').title).toEqual([
      { severity: 'low', excerpt: 'Shoes', title: 'The title is shorter than 15 characters' },
    ]);
  });

  it('given a page without or with a short or long meta description, then `meta_description` medium or low with the description as excerpt; a draft is never judged on it', () => {
    expect(byCategory(html(GOOD_TITLE + FAQ_LD, GOOD_BODY), 'url').meta_description).toEqual([
      { severity: 'medium', excerpt: null, title: 'The page has no meta description' },
    ]);
    expect(byCategory(html(`${GOOD_TITLE}<meta name="description" content="Shoes.">${FAQ_LD}`, GOOD_BODY), 'url').meta_description).toEqual([
      { severity: 'low', excerpt: 'Shoes.', title: 'The meta description is shorter than 70 characters' },
    ]);
    const long = 'x'.repeat(161);
    expect(byCategory(html(`${GOOD_TITLE}<meta content="${long}" name="description">${FAQ_LD}`, GOOD_BODY), 'url').meta_description).toEqual([
      { severity: 'low', excerpt: long, title: 'The meta description is longer than 160 characters' },
    ]);
    expect(byCategory(parseDraft({ title: 'Running shoes for flat feet: a guide', body: 'Acme.' }), 'draft').meta_description).toBeUndefined();
  });

  it('given no H1, two H1s, or a long page without H2 sections, then `headings` with the heading or the text it concerns', () => {
    const noH1 = byCategory(html(GOOD_TITLE + GOOD_META + FAQ_LD, GOOD_BODY.replace(/h1>/g, 'h3>')), 'url').headings;
    expect(noH1).toEqual([{ severity: 'medium', excerpt: null, title: 'The page has no H1 heading' }]);
    // a draft without a heading is not judged on its H1 (it has no page chrome yet)
    expect(byCategory(parseDraft({ title: 'Running shoes for flat feet: a guide', body: 'Acme makes shoes.' }), 'draft').headings).toBeUndefined();
    const twoH1 = byCategory(html(GOOD_TITLE + GOOD_META + FAQ_LD, `${GOOD_BODY}<h1>Also a title</h1>`), 'url').headings;
    expect(twoH1).toEqual([{ severity: 'low', excerpt: 'Also a title', title: 'The page has 2 H1 headings' }]);
    const long = `<h1>Running shoes for flat feet</h1><h3>FAQ</h3><p>Acme ${'makes stability shoes for runners. '.repeat(50)}</p>`;
    const noH2 = byCategory(html(GOOD_TITLE + GOOD_META + FAQ_LD, long), 'url').headings;
    expect(noH2).toHaveLength(1);
    expect(noH2[0]).toMatchObject({ severity: 'medium', title: 'The page has no H2 sections' });
    expect(noH2[0].excerpt).toMatch(/^Running shoes for flat feet/);
  });

  it('given no FAQ, then `faq` medium; question headings, a FAQ heading or FAQPage markup count as one', () => {
    const body = '<h1>Running shoes for flat feet</h1><p>Acme makes stability shoes.</p>';
    expect(byCategory(html(GOOD_TITLE + GOOD_META + FAQ_LD.replace(',"FAQPage"', ''), body), 'url').faq).toEqual([
      { severity: 'medium', excerpt: null, title: 'The page has no FAQ' },
    ]);
    expect(byCategory(html(GOOD_TITLE + GOOD_META + FAQ_LD, body), 'url').faq).toBeUndefined();
    expect(byCategory(html(GOOD_TITLE + GOOD_META + FAQ_LD, `${body}<h2>Frequently asked questions</h2>`), 'url').faq).toBeUndefined();
    expect(byCategory(html(GOOD_TITLE + GOOD_META + FAQ_LD, GOOD_BODY), 'url').faq).toBeUndefined();
  });

  it('given no schema.org markup, then `schema` medium; a FAQ without FAQPage markup `schema` low with its first question; microdata counts', () => {
    expect(byCategory(html(GOOD_TITLE + GOOD_META, GOOD_BODY), 'url').schema).toEqual([
      { severity: 'medium', excerpt: null, title: 'The page has no schema.org markup' },
    ]);
    const productOnly = '<script type="application/ld+json">{"@type":"Product"}</script>';
    expect(byCategory(html(GOOD_TITLE + GOOD_META + productOnly, GOOD_BODY), 'url').schema).toEqual([
      { severity: 'low', excerpt: 'Do I need arch support?', title: 'The FAQ has no FAQPage markup' },
    ]);
    const microdata = `<div itemscope itemtype="https://schema.org/FAQPage">${GOOD_BODY}</div>`;
    expect(byCategory(html(GOOD_TITLE + GOOD_META, microdata), 'url').schema).toBeUndefined();
    // a draft carries no markup to judge
    expect(
      byCategory(parseDraft({ title: 'Running shoes for flat feet: a guide', body: '# Running shoes\n\nAcme.' }), 'draft').schema,
    ).toBeUndefined();
  });

  it('given a page that never names the brand, then `brand` medium', () => {
    expect(byCategory(html(GOOD_TITLE + GOOD_META + FAQ_LD, GOOD_BODY.replace('Acme', 'We')), 'url').brand).toEqual([
      { severity: 'medium', excerpt: null, title: 'The page never names Acme' },
    ]);
  });
});

describe("SEO recommendations: the website's own data", () => {
  const page = html(
    GOOD_TITLE + GOOD_META + FAQ_LD,
    '<h1>A guide for Acme runners</h1><p>The best running shoes for flat feet give arch support and stability.</p><p>Trail shoes need grip.</p>' +
      '<h2>Do I need arch support?</h2><p>Yes.</p><h2>Are stability shoes heavier?</h2><p>A little.</p>',
  );
  const ctx: SeoContext = {
    brand: 'Acme',
    prompts: [
      { id: 'p1', text: 'best running shoes for flat feet' },
      { id: 'p2', text: 'trail shoes with grip for mud and snow' },
      { id: 'p3', text: 'cheap hiking boots' },
    ],
    competitorGaps: new Map([
      [
        'p1',
        [
          { name: 'Zoomer', answers: 3 },
          { name: 'Bolt', answers: 1 },
        ],
      ],
    ]),
    facts: [
      { id: 'f-low', text: 'Acme stability shoes carry a lifetime warranty on arch support', confidence: 'low' },
      { id: 'f-high', text: 'Acme running shoes for flat feet are podiatrist approved', confidence: 'high' },
    ],
  };

  it('given prompts the page covers fully or in part, then `prompt_coverage` low (answers) or medium (could answer) with the best-matching sentence; an uncovered prompt gives nothing', () => {
    const recs = recommend('job-1', page, ctx, 'url').filter((r) => r.category === 'prompt_coverage');
    expect(recs.map((r) => [r.severity, r.title, r.excerpt])).toEqual([
      ['medium', 'The page could answer “trail shoes with grip for mud and snow”', 'Trail shoes need grip.'],
      ['low', 'The page answers “best running shoes for flat feet”', 'The best running shoes for flat feet give arch support and stability.'],
    ]);
  });

  it('given competitors named instead of the brand in answers to a covered prompt, then `competitor_gap` high from 3 answers, else medium, with the prompt’s sentence', () => {
    const recs = recommend('job-1', page, ctx, 'url').filter((r) => r.category === 'competitor_gap');
    expect(recs.map((r) => [r.severity, r.title, r.excerpt])).toEqual([
      [
        'high',
        'Answers to “best running shoes for flat feet” name Zoomer instead of Acme',
        'The best running shoes for flat feet give arch support and stability.',
      ],
      [
        'medium',
        'Answers to “best running shoes for flat feet” name Bolt instead of Acme',
        'The best running shoes for flat feet give arch support and stability.',
      ],
    ]);
  });

  it('given approved facts the page lacks, then `facts` with the fact’s confidence as severity and its id (the excerpt is read when polled)', () => {
    const recs = recommend('job-1', page, ctx, 'url').filter((r) => r.category === 'facts');
    expect(recs.map((r) => [r.severity, r.fact_id, r.excerpt])).toEqual([
      ['high', 'f-high', null],
      ['low', 'f-low', null],
    ]);
  });

  it('given the same page and data, then the same list with the same ids, most severe first', () => {
    const one = recommend('job-1', page, ctx, 'url');
    expect(recommend('job-1', page, ctx, 'url')).toEqual(one);
    expect(new Set(one.map((r) => r.id)).size).toBe(one.length);
    const rank = { high: 0, medium: 1, low: 2 };
    expect(one.map((r) => rank[r.severity])).toEqual([...one.map((r) => rank[r.severity])].sort((a, b) => a - b));
    expect(recommend('job-2', page, ctx, 'url')[0].id).not.toBe(one[0].id);
  });
});
