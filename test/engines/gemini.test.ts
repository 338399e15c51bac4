import { describe, expect, it } from 'vitest';
import { MODELS } from '../../src/domain/models';
import { createGeminiEngine, geminiBody, parseGemini } from '../../src/engines/gemini';
import { EngineError } from '../../src/engines/port';
import { errorForStatus } from '../../src/engines/http';
import { adapterContract, KEY, request } from './contract';

const model = MODELS.find((m) => m.adapter === 'gemini')!;

// A generateContent answer grounded with Google Search.
const good = {
  candidates: [
    {
      content: {
        role: 'model',
        parts: [
          { text: 'Thinking about the options…', thought: true },
          { text: 'For small teams, **Trello** and ' },
          { text: '**ClickUp** are common recommendations.' },
        ],
      },
      finishReason: 'STOP',
      groundingMetadata: {
        webSearchQueries: ['best project management tool small team'],
        groundingChunks: [
          { web: { uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC123', title: 'zapier.com' } },
          { web: { uri: 'https://www.techradar.com/best/best-project-management-software', title: 'techradar.com' } },
          { retrievedContext: { uri: 'gs://bucket/doc' } },
        ],
        groundingSupports: [{ segment: { startIndex: 0, endIndex: 40 }, groundingChunkIndices: [0, 1] }],
      },
    },
  ],
  usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 40, thoughtsTokenCount: 100, totalTokenCount: 152 },
  modelVersion: 'gemini-2.5-flash',
  responseId: 'resp-1',
};

adapterContract({
  name: 'gemini',
  model,
  create: createGeminiEngine,
  good,
  reads: {
    text: 'For small teams, **Trello** and **ClickUp** are common recommendations.',
    citations: [
      'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC123',
      'https://www.techradar.com/best/best-project-management-software',
    ],
    tokens: { input_tokens: 12, output_tokens: 140 },
    provider_model: 'gemini-2.5-flash',
  },
  evidence: {
    retrieved: [
      'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC123',
      'https://www.techradar.com/best/best-project-management-software',
    ],
    search_queries: ['best project management tool small team'],
    bare: { ...good, candidates: [{ ...good.candidates[0], groundingMetadata: undefined }] },
  },
  sent: { method: 'POST', path: `/v1beta/models/${model.provider_model}:generateContent` },
  expectRequest(hit) {
    expect(hit.headers['x-goog-api-key']).toBe(KEY);
    // the key travels in the header only, never in the URL
    expect(hit.query.get('key')).toBeNull();
    expect(hit.body.contents).toEqual([{ role: 'user', parts: [{ text: request(model).prompt }] }]);
    expect(hit.body.tools).toEqual(model.web_search ? [{ google_search: {} }] : undefined);
  },
  wrongShape: { candidates: [{ content: { parts: 'nope' }, finishReason: 'STOP' }] },
  errorBody: (message) => ({ error: { code: 500, message, status: 'INTERNAL' } }),
});

describe('gemini request and answer', () => {
  it('given a location and persona, then a systemInstruction carries them', () => {
    const body = geminiBody(model, request(model, { location: { country: 'FR', city: 'Lyon' }, persona: { name: 'Student' } }));
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'The user is located in Lyon, FR. The user: Student.' }] });
  });

  it('given a blocked prompt, then rejected with the reason', () => {
    expect(() => parseGemini({ promptFeedback: { blockReason: 'SAFETY' } })).toThrow(/blocked.*SAFETY/);
  });

  it('given a candidate without text, then bad_response naming the finish reason', () => {
    let err: unknown;
    try {
      parseGemini({ candidates: [{ finishReason: 'MAX_TOKENS', content: { parts: [{ text: 'x', thought: true }] } }] });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ kind: 'bad_response', message: expect.stringContaining('MAX_TOKENS') });
  });

  it("given a 429 with Google's RetryInfo in the body, then retryAfterMs from it", () => {
    const err = errorForStatus({
      status: 429,
      headers: {},
      body: JSON.stringify({
        error: {
          code: 429,
          message: 'Resource has been exhausted',
          status: 'RESOURCE_EXHAUSTED',
          details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }],
        },
      }),
    });
    expect(err).toMatchObject({ kind: 'rate_limited', retryAfterMs: 7000, retryable: true });
  });
});
