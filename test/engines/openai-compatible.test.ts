import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS } from '../../src/domain/models';
import { createOpenAiCompatibleEngine, openAiChatBody, parseOpenAiChat } from '../../src/engines/openai-compatible';
import { EngineError } from '../../src/engines/port';
import { adapterContract, KEY, request } from './contract';
import { type FakeProvider, loopbackFetch, startFakeProvider } from './support';

const searchModel = MODELS.find((m) => m.adapter === 'openai-compatible' && m.web_search)!;
const plainModel = MODELS.find((m) => m.adapter === 'openai-compatible' && !m.web_search)!;

// The shape of an OpenAI Chat Completions answer from a search model (annotations with url_citation).
const good = {
  id: 'chatcmpl-abc123',
  object: 'chat.completion',
  created: 1741900000,
  model: 'gpt-4o-search-preview-2025-03-11',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Asana and Trello are popular picks ([asana.com](https://asana.com/?utm_source=openai)). Reviewers also like Linear.',
        refusal: null,
        annotations: [
          { type: 'url_citation', url_citation: { start_index: 36, end_index: 81, title: 'Asana', url: 'https://asana.com/?utm_source=openai' } },
          {
            type: 'url_citation',
            url_citation: { start_index: 90, end_index: 120, title: 'G2', url: 'https://www.g2.com/categories/project-management' },
          },
          {
            type: 'url_citation',
            url_citation: { start_index: 121, end_index: 130, title: 'Asana again', url: 'https://asana.com/?utm_source=openai' },
          },
        ],
      },
      finish_reason: 'stop',
    },
  ],
  usage: { prompt_tokens: 21, completion_tokens: 64, total_tokens: 85 },
};

adapterContract({
  name: 'openai-compatible',
  model: searchModel,
  create: createOpenAiCompatibleEngine,
  good,
  reads: {
    text: /^Asana and Trello are popular picks/,
    citations: ['https://asana.com/?utm_source=openai', 'https://www.g2.com/categories/project-management'],
    tokens: { input_tokens: 21, output_tokens: 64 },
    provider_model: 'gpt-4o-search-preview-2025-03-11',
  },
  expectGood(r) {
    expect(r.products).toEqual([]);
  },
  sent: { method: 'POST', path: '/chat/completions' },
  expectRequest(hit) {
    expect(hit.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(hit.headers['content-type']).toBe('application/json');
    expect(hit.body.model).toBe(searchModel.provider_model);
    expect(hit.body.messages.at(-1)).toEqual({ role: 'user', content: request(searchModel).prompt });
  },
  wrongShape: { object: 'chat.completion', choices: [] },
  errorBody: (message) => ({ error: { message, type: 'invalid_request_error', param: null, code: null } }),
});

describe('openai-compatible request and answer', () => {
  let server: FakeProvider;
  beforeAll(async () => {
    server = await startFakeProvider();
  });
  afterAll(() => server.close());

  it('given a search model and a location, then web_search_options carries the approximate location, and the context a system message', () => {
    const body = openAiChatBody(
      searchModel,
      request(searchModel, {
        location: { country: 'United Kingdom', region: 'England', city: 'London' },
        persona: { name: 'Startup founder', description: 'runs a team of five' },
      }),
    );
    expect(body.web_search_options).toEqual({
      user_location: { type: 'approximate', approximate: { country: 'GB', region: 'England', city: 'London' } },
    });
    expect((body.messages as any[])[0]).toEqual({
      role: 'system',
      content: 'The user is located in London, England, United Kingdom. The user: Startup founder (runs a team of five).',
    });
  });

  it('given a model without web_search, then a plain chat request at its own base_url path', async () => {
    server.script({ body: { model: plainModel.provider_model, choices: [{ message: { role: 'assistant', content: 'Plain answer.' } }] } });
    const engine = createOpenAiCompatibleEngine({
      model: plainModel,
      apiKey: KEY,
      fetch: loopbackFetch,
      options: { baseUrl: `${server.url}/compat/v1/` },
    });
    const r = await engine.ask(request(plainModel, { location: { country: 'US' } }));
    expect(r).toMatchObject({ text: 'Plain answer.', citations: [], usage: { credits: 1 } });
    const hit = server.hits.at(-1)!;
    expect(hit.path).toBe('/compat/v1/chat/completions');
    expect(hit.body.model).toBe(plainModel.provider_model);
    expect(hit.body.web_search_options).toBeUndefined();
    expect(hit.body.messages).toHaveLength(2);
  });

  it('given content as text parts and a provider-level citations array (xAI), then both read', () => {
    const r = parseOpenAiChat({
      model: 'grok-4',
      choices: [
        {
          message: {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Part one. ' },
              { type: 'text', text: 'Part two.' },
            ],
          },
        },
      ],
      citations: ['https://x.ai/news', 'not a url', 'https://x.ai/news'],
    });
    expect(r.text).toBe('Part one. Part two.');
    expect(r.citations).toEqual(['https://x.ai/news']);
  });

  it('given a refusal without content, then the refusal text', () => {
    expect(parseOpenAiChat({ choices: [{ message: { content: null, refusal: 'I cannot help with that.' } }] }).text).toBe('I cannot help with that.');
  });

  it.each([
    { what: 'no choices', body: {} },
    { what: 'a message without content', body: { choices: [{ message: { role: 'assistant', content: null } }] } },
    { what: 'choices that are not an array', body: { choices: 'x' } },
    { what: 'annotations that are not an array', body: { choices: [{ message: { content: 7 } }] } },
  ])('given $what, then bad_response', ({ body }) => {
    expect(() => parseOpenAiChat(body)).toThrow(EngineError);
  });

  it('given annotations of the wrong types, then they are skipped, not a crash', () => {
    const r = parseOpenAiChat({
      choices: [
        { message: { content: 'ok', annotations: [null, 7, { type: 'url_citation' }, { type: 'url_citation', url_citation: { url: 42 } }] } },
      ],
    });
    expect(r).toMatchObject({ text: 'ok', citations: [] });
  });

  it('given an insufficient_quota 429, then rate_limited and not retried', async () => {
    server.reset();
    server.script({
      status: 429,
      body: { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } },
    });
    const engine = createOpenAiCompatibleEngine({
      model: searchModel,
      apiKey: KEY,
      fetch: loopbackFetch,
      options: { baseUrl: server.url, backoffBaseMs: 1 },
    });
    const err = await engine.ask(request(searchModel)).catch((e) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ kind: 'rate_limited', retryable: false });
    expect(server.hits).toHaveLength(1);
  });

  it('given a 429 with retry-after-ms, then it waits that long', async () => {
    server.reset();
    server.script({ status: 429, headers: { 'retry-after-ms': '250' }, body: { error: { message: 'slow' } } }, { body: good });
    const engine = createOpenAiCompatibleEngine({
      model: searchModel,
      apiKey: KEY,
      fetch: loopbackFetch,
      options: { baseUrl: server.url, backoffBaseMs: 1 },
    });
    await engine.ask(request(searchModel));
    const gap = server.hits[1].at - server.hits[0].at;
    expect(gap).toBeGreaterThanOrEqual(240);
    expect(gap).toBeLessThan(800);
  });

  it('given a request for another model, then rejected without a request', async () => {
    server.reset();
    const engine = createOpenAiCompatibleEngine({ model: searchModel, apiKey: KEY, fetch: loopbackFetch, options: { baseUrl: server.url } });
    await expect(engine.ask(request(plainModel))).rejects.toMatchObject({ kind: 'rejected' });
    expect(server.hits).toHaveLength(0);
  });
});
