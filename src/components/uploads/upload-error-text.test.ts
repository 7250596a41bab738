import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors';
import { messagesFor } from '../../i18n';
import { uploadsEn, uploadsZhCN } from '../../i18n/uploads';
import { errorOf, UploadFailure } from '../../uploads/failures';
import { uploadErrorText } from './upload-error-text';

const ENGLISH = 'the service’s English words';
const zh = messagesFor('zh-CN');

describe('an upload’s failure in the user’s language', () => {
  it('a refusal is told by its reason, never by the service’s English words', () => {
    const quota = errorOf(new ApiError('TooLarge', ENGLISH, { reason: 'quota-exceeded' }, 413));
    const text = uploadErrorText(quota, uploadsZhCN, zh);
    expect(text).toBe(`${uploadsZhCN.stateError}: ${zh.refusalText('quota-exceeded', '')}`);
    expect(text).not.toContain(ENGLISH);
  });

  it('a refusal without a reason this app knows is told by its code', () => {
    const text = uploadErrorText(errorOf(new ApiError('Conflict', ENGLISH, {}, 409)), uploadsZhCN, zh);
    expect(text).toBe(`${uploadsZhCN.stateError}: ${zh.errConflict}`);
  });

  it('a name the service would refuse is told by its problem', () => {
    const failure = errorOf(new UploadFailure('InvalidArgument', 'English words about the name', { kind: 'empty' }));
    expect(uploadErrorText(failure, uploadsEn, messagesFor('en'))).toBe(`${uploadsEn.stateError}: ${messagesFor('en').nameProblem({ kind: 'empty' })}`);
  });

  it('the engine’s own failures have their own words', () => {
    expect(uploadErrorText(errorOf(new UploadFailure('Changed', ENGLISH)), uploadsZhCN, zh)).toBe(uploadsZhCN.errChanged);
    expect(uploadErrorText(errorOf(new ApiError('Network', ENGLISH)), uploadsZhCN, zh)).toBe(uploadsZhCN.errNetwork);
    expect(uploadErrorText(undefined, uploadsZhCN, zh)).toBe(uploadsZhCN.stateError);
  });
});
