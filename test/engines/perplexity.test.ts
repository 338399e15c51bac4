import { describe, expect, it } from 'vitest';
import { MODELS } from '../../src/domain/models';
import { createPerplexityEngine, parsePerplexity, perplexityBody } from '../../src/engines/perplexity';
import { adapterContract, KEY, request } from './contract';

const model = MODELS.find((m) => m.adapter === 'perplexity')!;

// A Sonar chat completion: citations (URL array) and search_results (the same sources, with titles).
const good = {
  id: 'pplx-1',
  model: 'sonar',
  created: 1741900000,
  object: 'chat.completion',
  choices: [
    {
      index: 0,
      finish_reason: 'stop',
      message: { role: 'assistant', content: 'Monday.com and Asana lead most lists [1][2]. Notion is a budget option [3].' },
    },
  ],
  citations: ['https://www.forbes.com/advisor/business/software/best-project-management-software/', 'https://asana.com/', 'https://www.notion.com/'],
  search_results: [
    { title: 'Best PM software', url: 'https://www.forbes.com/advisor/business/software/best-project-management-software/', date: '2025-02-01' },
    { title: 'Asana', url: 'https://asana.com/', date: null },
    { title: 'Notion', url: 'https://www.notion.com/' },
    { title: 'Extra', url: 'https://www.reddit.com/r/smallbusiness/comments/x1/' },
  ],
  usage: { prompt_tokens: 10, completion_tokens: 30, total_tokens: 40, search_context_size: 'low' },
};

adapterContract({
  name: 'perplexity',
  model,
  create: createPerplexityEngine,
  good,
  reads: {
    text: 'Monday.com and Asana lead most lists [1][2]. Notion is a budget option [3].',
    citations: [
      'https://www.forbes.com/advisor/business/software/best-project-management-software/',
      'https://asana.com/',
      'https://www.notion.com/',
      'https://www.reddit.com/r/smallbusiness/comments/x1/',
    ],
    tokens: { input_tokens: 10, output_tokens: 30 },
    provider_model: 'sonar',
  },
  evidence: {
    retrieved: [
      'https://www.forbes.com/advisor/business/software/best-project-management-software/',
      'https://asana.com/',
      'https://www.notion.com/',
      'https://www.reddit.com/r/smallbusiness/comments/x1/',
    ],
    bare: { ...good, search_results: undefined },
  },
  sent: { method: 'POST', path: '/chat/completions' },
  expectRequest(hit) {
    expect(hit.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(hit.body.model).toBe(model.provider_model);
    expect(hit.body.messages).toEqual([{ role: 'user', content: request(model).prompt }]);
  },
  wrongShape: { id: 'x', choices: [{ message: { role: 'assistant' } }] },
  errorBody: (message) => ({ error: { message, type: 'invalid_request', code: 400 } }),
});

describe('perplexity request and answer', () => {
  it('given a location, then web_search_options.user_location with the country code', () => {
    const body = perplexityBody(model, request(model, { location: { country: 'United States', region: 'California', city: 'San Francisco' } }));
    expect(body.web_search_options).toEqual({ user_location: { country: 'US', region: 'California', city: 'San Francisco' } });
  });

  it('given a reasoning answer, then the <think> block is left out', () => {
    const r = parsePerplexity({
      choices: [{ message: { content: '<think>Let me weigh them.</think>\nAsana wins.' } }],
      search_results: [{ url: 'https://asana.com/' }],
    });
    expect(r.text).toBe('Asana wins.');
    expect(r.citations).toEqual(['https://asana.com/']);
  });

  it('given only search_results, then citations from them', () => {
    const r = parsePerplexity({ choices: [{ message: { content: 'x' } }], search_results: [{ url: 'https://a.example/' }, 'junk', { url: null }] });
    expect(r.citations).toEqual(['https://a.example/']);
  });
});
