import { describe, it } from 'vitest';
import { pitchesProjection } from '../../../projections/pitches';
import { projectionSpec, streamOf, T0, T1 } from '../../support/projection-spec';

const { org, given } = projectionSpec(pitchesProjection);
const pitch = streamOf('pitch');
const job = pitch.id;

const requested = (p = pitch, token = 'tok') =>
  p.on('PitchRequested', {
    job_id: p.id,
    website_url: 'https://prospect.example/',
    company_url: 'https://prospect.example',
    domain: 'prospect.example',
    country: 'US',
    language: 'en',
    models: ['chatgpt', 'gemini'],
    report_token: token,
    allowance: null,
  });
const answers = (model: string) => pitch.on('PitchAnswersRecorded', { job_id: job, model, answers: [] });

describe('pitches read model: pitch reports filled in as their jobs go', () => {
  it('given nothing, when a pitch is requested, then the report is processing with its prospect, models and token', async () => {
    await given()
      .when(requested())
      .then({
        rm_pitches: [
          {
            id: job,
            organization_id: org,
            domain: 'prospect.example',
            models: ['chatgpt', 'gemini'],
            report_token: 'tok',
            status: 'processing',
            competitors: [],
            answered_models: [],
            created_at: T0,
          },
        ],
      });
  });

  it('given a pitch, when the site could not be read, then the report names the company from the domain and tells why', async () => {
    await given(requested())
      .when(
        pitch.on('PitchSiteResearched', {
          job_id: job,
          company_name: 'Prospect',
          company_description: 'prospect.example',
          final_url: 'https://prospect.example',
          research_note: 'The website could not be read: the domain does not resolve',
        }),
      )
      .then({ rm_pitches: [{ id: job, company_name: 'Prospect', research_note: 'The website could not be read: the domain does not resolve' }] });
  });

  it('given a plan, then its competitors start at zero mentions; a model answers recorded twice is listed once', async () => {
    await given(
      requested(),
      pitch.on('PitchPlanWritten', {
        job_id: job,
        competitors: [{ id: 'c1', name: 'Rival', url: 'https://rival.example' }],
        prompts: [],
        attributes: [],
      }),
    )
      .when(answers('chatgpt'), answers('chatgpt'), answers('gemini'))
      .then({
        rm_pitches: [
          {
            id: job,
            competitors: [{ id: 'c1', name: 'Rival', url: 'https://rival.example', mentions: 0, sentiment: 0 }],
            answered_models: ['chatgpt', 'gemini'],
          },
        ],
      });
  });

  it('given two pitches, when one job succeeds and a job of another kind with the other id fails, then only the first moves', async () => {
    const other = streamOf('pitch');
    await given(requested(), requested(other, 'tok2'))
      .when(pitch.succeeded(T1), streamOf('seo', other.id).failed('engine', 'x'))
      .then({
        rm_pitches: {
          columns: ['id', 'status', 'finished_at'],
          orderBy: 'report_token',
          rows: [
            { id: job, status: 'completed', finished_at: T1 },
            { id: other.id, status: 'processing', finished_at: null },
          ],
        },
      });
  });

  it('given a pitch, when its job fails, then the report is failed with the kind and message', async () => {
    await given(requested())
      .when(pitch.failed('engine', 'the engine refused for good'))
      .then({ rm_pitches: [{ id: job, status: 'failed', error_kind: 'engine', error: 'the engine refused for good' }] });
  });
});
