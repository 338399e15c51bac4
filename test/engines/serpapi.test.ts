import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MODELS } from '../../src/domain/models';
import { AI_OVERVIEW_ENGINE, createSerpApiEngine, parsePrice, parseSerpApi } from '../../src/engines/serpapi';
import { adapterContract, KEY, request } from './contract';
import { type FakeProvider, loopbackFetch, startFakeProvider } from './support';

const aiMode = MODELS.find((m) => m.adapter === 'serpapi' && m.shopping)!;
const overview = MODELS.find((m) => m.adapter === 'serpapi' && m.provider_model === AI_OVERVIEW_ENGINE)!;
const copilot = MODELS.find((m) => m.adapter === 'serpapi' && !m.shopping && m.provider_model !== AI_OVERVIEW_ENGINE)!;

const metadata = (engine: string) => ({
  search_metadata: { id: '67d4', status: 'Success', json_endpoint: 'https://serpapi.com/searches/x.json' },
  search_parameters: { engine },
});

// A Google AI Mode answer with a list, references and shopping results.
const good = {
  ...metadata('google_ai_mode'),
  text_blocks: [
    { type: 'paragraph', snippet: 'Good options for small teams include:', reference_indexes: [0] },
    {
      type: 'list',
      list: [
        { title: 'Asana', snippet: 'clear task views and timelines.', reference_indexes: [0, 1] },
        { snippet: 'Trello: simple boards.', list: [{ snippet: 'Free plan for up to 10 boards.' }] },
      ],
    },
    {
      type: 'table',
      table: [
        ['Tool', 'Price'],
        ['Asana', '$10.99'],
      ],
    },
    { type: 'heading', snippet: 'Bottom line' },
  ],
  references: [
    { title: 'Best PM tools', link: 'https://www.zapier.com/blog/best-project-management-software/', snippet: '…', source: 'Zapier', index: 0 },
    { title: 'Asana', link: 'https://asana.com/pricing?utm_source=google', source: 'Asana', index: 1 },
    { title: 'dup', link: 'https://asana.com/pricing?utm_source=google', index: 2 },
    // read by the engine but pointed at by no block: retrieved, not cited
    { title: 'Monday vs Asana', link: 'https://monday.com/blog/asana-alternatives/', source: 'monday.com', index: 3 },
  ],
  shopping_results: [
    {
      position: 1,
      title: 'Asana Premium (1 year)',
      price: '$131.88',
      extracted_price: 131.88,
      source: 'Asana',
      link: 'https://asana.com/premium',
      thumbnail: 'https://x/y.jpg',
    },
    { position: 2, title: 'Planner Notebook', price: '12,99 €', source: 'Amazon.de', product_link: 'https://www.google.com/shopping/product/1' },
    { position: 3, price: '$5' },
  ],
};

adapterContract({
  name: 'serpapi (google_ai_mode)',
  model: aiMode,
  create: createSerpApiEngine,
  good,
  reads: {
    text: [
      'Good options for small teams include:',
      '- Asana: clear task views and timelines.',
      '- Trello: simple boards.',
      '- Free plan for up to 10 boards.',
      'Tool | Price',
      'Asana | $10.99',
      'Bottom line',
    ].join('\n'),
    citations: ['https://www.zapier.com/blog/best-project-management-software/', 'https://asana.com/pricing?utm_source=google'],
    provider_model: aiMode.provider_model,
  },
  evidence: {
    retrieved: [
      'https://www.zapier.com/blog/best-project-management-software/',
      'https://asana.com/pricing?utm_source=google',
      'https://monday.com/blog/asana-alternatives/',
    ],
    bare: { ...good, references: undefined },
  },
  expectGood(r) {
    expect(r.products).toEqual([
      { name: 'Asana Premium (1 year)', merchant: 'Asana', price: 131.88, currency: 'USD', position: 1, url: 'https://asana.com/premium' },
      {
        name: 'Planner Notebook',
        merchant: 'Amazon.de',
        price: 12.99,
        currency: 'EUR',
        position: 2,
        url: 'https://www.google.com/shopping/product/1',
      },
    ]);
    expect(r.usage).toEqual({ credits: 1 });
  },
  sent: { method: 'GET', path: '/search.json' },
  expectRequest(hit) {
    expect(hit.query.get('engine')).toBe(aiMode.provider_model);
    expect(hit.query.get('q')).toBe(request(aiMode).prompt);
    expect(hit.query.get('api_key')).toBe(KEY);
  },
  wrongShape: { ...metadata('google_ai_mode'), organic_results: [] },
  errorBody: (message) => ({ error: message }),
});

describe('serpapi engines', () => {
  let server: FakeProvider;
  const engine = (model = aiMode) =>
    createSerpApiEngine({ model, apiKey: KEY, fetch: loopbackFetch, options: { baseUrl: server.url, backoffBaseMs: 1 } });

  beforeAll(async () => {
    server = await startFakeProvider();
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());

  it('given a location, then Google engines get gl and a city-level location', async () => {
    server.script({ body: good });
    await engine().ask(request(aiMode, { location: { country: 'United Kingdom', region: 'England', city: 'Leeds' } }));
    const q = server.hits[0].query;
    expect(q.get('gl')).toBe('uk');
    expect(q.get('location')).toBe('Leeds, England, United Kingdom');
  });

  it('given Bing Copilot, then one request with q and no location, header and blocks as text, references as citations', async () => {
    server.script({
      body: {
        ...metadata('bing_copilot'),
        header: 'Project management tools',
        text_blocks: [
          { type: 'paragraph', snippet: 'Microsoft Planner fits teams on Microsoft 365.', reference_indexes: [1] },
          { type: 'code_block', code: 'n/a' },
        ],
        references: [{ index: 1, title: 'Planner', link: 'https://www.microsoft.com/microsoft-365/planner', source: 'Microsoft' }],
      },
    });
    const r = await engine(copilot).ask(request(copilot, { location: { country: 'US', city: 'Austin' } }));
    expect(r.text).toBe('Project management tools\nMicrosoft Planner fits teams on Microsoft 365.\nn/a');
    expect(r.citations).toEqual(['https://www.microsoft.com/microsoft-365/planner']);
    expect(r.products).toEqual([]);
    const q = server.hits[0].query;
    expect(q.get('engine')).toBe(copilot.provider_model);
    expect(q.get('location')).toBeNull();
    expect(q.get('gl')).toBeNull();
  });

  it('given an AI Overview inline in the Google results, then one Google search answers', async () => {
    server.script({
      body: {
        ...metadata('google'),
        ai_overview: { text_blocks: [{ type: 'paragraph', snippet: 'Asana is popular.' }], references: [{ link: 'https://asana.com/', index: 0 }] },
        organic_results: [{ link: 'https://example.org/' }],
        shopping_results: [{ title: 'Not part of the overview', price: '$1' }],
      },
    });
    const r = await engine(overview).ask(request(overview));
    expect(r).toMatchObject({ text: 'Asana is popular.', citations: ['https://asana.com/'], products: [], usage: { credits: 1 } });
    expect(server.hits).toHaveLength(1);
    expect(server.hits[0].query.get('engine')).toBe('google');
    expect(server.hits[0].query.get('q')).toBe(request(overview).prompt);
  });

  it('given an AI Overview behind a page_token, then a second request to google_ai_overview, and 2 credits', async () => {
    server.script(
      {
        body: {
          ...metadata('google'),
          ai_overview: { page_token: 'tok-123', serpapi_link: 'https://serpapi.com/search.json?engine=google_ai_overview&page_token=tok-123' },
        },
      },
      {
        body: {
          ...metadata(AI_OVERVIEW_ENGINE),
          ai_overview: {
            text_blocks: [{ type: 'paragraph', snippet: 'Trello suits small teams.' }],
            references: [{ link: 'https://trello.com/', index: 0 }],
          },
        },
      },
    );
    const r = await engine(overview).ask(request(overview));
    expect(r).toMatchObject({ text: 'Trello suits small teams.', citations: ['https://trello.com/'], usage: { credits: 2 } });
    expect(server.hits).toHaveLength(2);
    const second = server.hits[1].query;
    expect(second.get('engine')).toBe(AI_OVERVIEW_ENGINE);
    expect(second.get('page_token')).toBe('tok-123');
    expect(second.get('api_key')).toBe(KEY);
    expect(second.get('q')).toBeNull();
  });

  const refs = (...links: string[]) => links.map((link, index) => ({ index, title: `Page ${index}`, link, source: new URL(link).hostname }));

  it('given blocks with reference_indexes, then the references pointed at are cited in order of first mention, and every reference is retrieved', async () => {
    server.script({
      body: {
        ...metadata('google_ai_mode'),
        text_blocks: [
          { type: 'paragraph', snippet: 'Trello and Asana both suit small teams.', reference_indexes: [2] },
          {
            type: 'list',
            list: [
              { title: 'Trello', snippet: 'boards.', reference_indexes: [2, 0] },
              { title: 'Asana', snippet: 'timelines.', list: [{ snippet: 'Free for 10 users.', reference_indexes: [4] }] },
            ],
          },
          { type: 'heading', snippet: 'Verdict' },
        ],
        references: refs(
          'https://asana.com/',
          'https://www.g2.com/categories/project-management',
          'https://trello.com/',
          'https://www.reddit.com/r/pm/',
          'https://asana.com/pricing',
        ),
      },
    });
    const r = await engine().ask(request(aiMode));
    expect(r.citations).toEqual(['https://trello.com/', 'https://asana.com/', 'https://asana.com/pricing']);
    expect(r.retrieved).toEqual([
      'https://asana.com/',
      'https://www.g2.com/categories/project-management',
      'https://trello.com/',
      'https://www.reddit.com/r/pm/',
      'https://asana.com/pricing',
    ]);
    expect(r.search_queries).toBeUndefined();
  });

  it('given references but no block with reference_indexes, then every reference is cited and retrieved', async () => {
    server.script({
      body: {
        ...metadata('google_ai_mode'),
        text_blocks: [{ type: 'paragraph', snippet: 'Asana and Trello are common picks.' }],
        references: refs('https://asana.com/', 'https://trello.com/'),
      },
    });
    const r = await engine().ask(request(aiMode));
    expect(r.citations).toEqual(['https://asana.com/', 'https://trello.com/']);
    expect(r.retrieved).toEqual(['https://asana.com/', 'https://trello.com/']);
    expect(r.search_queries).toBeUndefined();
  });

  it('given reference_indexes that point at no reference, then every reference is cited, as without them', async () => {
    server.script({
      body: {
        ...metadata('bing_copilot'),
        text_blocks: [{ type: 'paragraph', snippet: 'Planner fits Microsoft 365 teams.', reference_indexes: [7] }],
        references: refs('https://www.microsoft.com/planner', 'https://learn.microsoft.com/planner'),
      },
    });
    const r = await engine(copilot).ask(request(copilot));
    expect(r.citations).toEqual(['https://www.microsoft.com/planner', 'https://learn.microsoft.com/planner']);
    expect(r.retrieved).toEqual(r.citations);
  });

  it('given an AI Overview behind a page_token whose blocks carry reference_indexes, then the pointed references are cited and all are retrieved', async () => {
    server.script(
      { body: { ...metadata('google'), ai_overview: { page_token: 'tok-9' } } },
      {
        body: {
          ...metadata(AI_OVERVIEW_ENGINE),
          ai_overview: {
            text_blocks: [
              { type: 'paragraph', snippet: 'ClickUp packs many features.', reference_indexes: [1] },
              { type: 'list', list: [{ snippet: 'Notion doubles as a wiki.', reference_indexes: [1, 2] }] },
            ],
            references: refs('https://www.capterra.com/project-management-software/', 'https://clickup.com/', 'https://www.notion.com/'),
          },
        },
      },
    );
    const r = await engine(overview).ask(request(overview));
    expect(r).toMatchObject({ text: 'ClickUp packs many features.\n- Notion doubles as a wiki.', usage: { credits: 2 } });
    expect(r.citations).toEqual(['https://clickup.com/', 'https://www.notion.com/']);
    expect(r.retrieved).toEqual(['https://www.capterra.com/project-management-software/', 'https://clickup.com/', 'https://www.notion.com/']);
    expect(r.search_queries).toBeUndefined();
    expect(server.hits[1].query.get('page_token')).toBe('tok-9');
  });

  it('given Google showed no AI Overview, then an empty answer, not an error', async () => {
    server.script({ body: { ...metadata('google'), organic_results: [{ link: 'https://example.org/' }] } });
    expect(await engine(overview).ask(request(overview))).toMatchObject({ text: '', citations: [], products: [], usage: { credits: 1 } });
  });

  it('given "hasn\'t returned any results", then an empty answer', async () => {
    server.script({ body: { ...metadata('google_ai_mode'), error: "Google hasn't returned any results for this query." } });
    expect(await engine().ask(request(aiMode))).toMatchObject({ text: '', citations: [] });
  });

  it('given another error at 200, then rejected', async () => {
    server.script({ body: { error: 'Unsupported `xx` location.' } });
    await expect(engine().ask(request(aiMode))).rejects.toMatchObject({ kind: 'rejected' });
  });

  it('given an account out of searches (429), then rate_limited, not retried', async () => {
    server.script({ status: 429, body: { error: 'Your account has run out of searches.' } });
    await expect(engine().ask(request(aiMode))).rejects.toMatchObject({ kind: 'rate_limited', retryable: false });
    expect(server.hits).toHaveLength(1);
  });

  it('given text_blocks of the wrong type, then bad_response', () => {
    expect(() => parseSerpApi({ text_blocks: { a: 1 } })).toThrow(/text_blocks/);
  });

  it.each([
    { text: '$1,299.00', price: 1299, currency: 'USD' },
    { text: '12,99 €', price: 12.99, currency: 'EUR' },
    { text: '£45', price: 45, currency: 'GBP' },
    { text: 'CA$19.50', price: 19.5, currency: 'CAD' },
    { text: '1.299,00 €', price: 1299, currency: 'EUR' },
    { text: 'EUR 8.50', price: 8.5, currency: 'EUR' },
    { text: 'free', price: undefined, currency: undefined },
  ])('parsePrice($text) = $price $currency', ({ text, price, currency }) => {
    expect(parsePrice(text)).toEqual({ ...(price !== undefined && { price }), ...(currency !== undefined && { currency }) });
  });
});
