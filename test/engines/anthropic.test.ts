import { describe, expect, it } from 'vitest';
import { MODELS } from '../../src/domain/models';
import { ANTHROPIC_VERSION, ANTHROPIC_WEB_SEARCH_TOOL, anthropicBody, createAnthropicEngine, parseAnthropic } from '../../src/engines/anthropic';
import { EngineError } from '../../src/engines/port';
import { adapterContract, KEY, request } from './contract';

const model = MODELS.find((m) => m.adapter === 'anthropic')!;

// A Messages API answer with the server-side web search tool: the text is split into blocks around citations.
const good = {
  id: 'msg_01XyZ',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [
    { type: 'text', text: "I'll search for current reviews." },
    { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'best project management tool small team' } },
    {
      type: 'web_search_tool_result',
      tool_use_id: 'srvtoolu_01',
      content: [
        {
          type: 'web_search_result',
          title: 'Best PM tools',
          url: 'https://www.pcmag.com/picks/the-best-project-management-software',
          encrypted_content: 'xyz',
          page_age: 'March 1, 2025',
        },
        { type: 'web_search_result', title: 'Asana', url: 'https://asana.com/', encrypted_content: 'abc' },
        {
          type: 'web_search_result',
          title: 'Reddit thread',
          url: 'https://www.reddit.com/r/projectmanagement/comments/abc/',
          encrypted_content: 'def',
        },
      ],
    },
    { type: 'text', text: ' For a small team, ' },
    {
      type: 'text',
      text: 'Asana is a strong choice',
      citations: [
        { type: 'web_search_result_location', url: 'https://asana.com/', title: 'Asana', encrypted_index: 'e1', cited_text: 'Asana helps teams…' },
      ],
    },
    {
      type: 'text',
      text: ', and PCMag rates Trello highly.',
      citations: [
        {
          type: 'web_search_result_location',
          url: 'https://www.pcmag.com/picks/the-best-project-management-software',
          title: 'Best PM tools',
          encrypted_index: 'e2',
          cited_text: 'Trello…',
        },
      ],
    },
  ],
  stop_reason: 'end_turn',
  usage: { input_tokens: 2100, output_tokens: 180, server_tool_use: { web_search_requests: 1 } },
};

adapterContract({
  name: 'anthropic',
  model,
  create: createAnthropicEngine,
  good,
  reads: {
    text: "I'll search for current reviews. For a small team, Asana is a strong choice, and PCMag rates Trello highly.",
    // cited first, in reading order; then the other sources the search returned
    citations: [
      'https://asana.com/',
      'https://www.pcmag.com/picks/the-best-project-management-software',
      'https://www.reddit.com/r/projectmanagement/comments/abc/',
    ],
    tokens: { input_tokens: 2100, output_tokens: 180 },
    provider_model: 'claude-sonnet-4-5-20250929',
  },
  evidence: {
    // every search result the engine read, and the query it searched
    retrieved: [
      'https://www.pcmag.com/picks/the-best-project-management-software',
      'https://asana.com/',
      'https://www.reddit.com/r/projectmanagement/comments/abc/',
    ],
    search_queries: ['best project management tool small team'],
    bare: { ...good, content: good.content.filter((b) => b.type === 'text').map((b) => ({ type: 'text', text: b.text })) },
  },
  sent: { method: 'POST', path: '/v1/messages' },
  expectRequest(hit) {
    expect(hit.headers['x-api-key']).toBe(KEY);
    expect(hit.headers['anthropic-version']).toBe(ANTHROPIC_VERSION);
    expect(hit.headers.authorization).toBeUndefined();
    expect(hit.body.model).toBe(model.provider_model);
    expect(hit.body.max_tokens).toBe(4096);
    expect(hit.body.messages).toEqual([{ role: 'user', content: request(model).prompt }]);
  },
  wrongShape: { id: 'msg_1', type: 'message', content: 'not blocks' },
  errorBody: (message) => ({ type: 'error', error: { type: 'overloaded_error', message } }),
});

describe('anthropic request and answer', () => {
  it('given a web_search model and a location, then the web search tool with the approximate location, and the context as system', () => {
    const body = anthropicBody(
      { ...model, web_search: true },
      request(model, {
        location: { country: 'Germany', city: 'Berlin' },
        persona: { name: 'IT manager' },
      }),
    );
    expect(body.tools).toEqual([
      { type: ANTHROPIC_WEB_SEARCH_TOOL, name: 'web_search', max_uses: 5, user_location: { type: 'approximate', city: 'Berlin', country: 'DE' } },
    ]);
    expect(body.system).toBe('The user is located in Berlin, Germany. The user: IT manager.');
  });

  it('given a model without web_search, then no tools', () => {
    expect(anthropicBody({ ...model, web_search: false }, request(model)).tools).toBeUndefined();
  });

  it('given a search error block and odd blocks, then the text still reads', () => {
    const r = parseAnthropic({
      content: [
        { type: 'web_search_tool_result', content: { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' } },
        null,
        { type: 'text', text: 'Answer without sources.', citations: [null, { url: 5 }] },
      ],
    });
    expect(r).toMatchObject({ text: 'Answer without sources.', citations: [] });
  });

  it('given no text block, then bad_response naming the stop reason', () => {
    expect(() => parseAnthropic({ content: [{ type: 'server_tool_use' }], stop_reason: 'pause_turn' })).toThrow(/pause_turn/);
    expect(() => parseAnthropic({ content: [] })).toThrow(EngineError);
  });
});
