/**
 * The upload panel's and the drop zone's messages, English and Simplified Chinese. Kept apart from
 * en.ts and zh-cn.ts so that they can be merged into them later; until then `useUploadText()`
 * picks the dictionary by the app's language (useI18n).
 */
import { useI18n, type Language } from './index';

const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

export const uploadsEn = {
  uploadsRegion: 'Uploads',
  uploadsList: 'Files being uploaded',
  uploadingCount: (done: number, total: number) => `Uploading: ${done.toLocaleString('en')} of ${plural(total, 'file', 'files')} done`,
  uploadedAll: (total: number) => `${plural(total, 'file', 'files')} uploaded`,
  uploadsPausedCount: (paused: number) => `${plural(paused, 'upload', 'uploads')} paused`,
  failedCount: (failed: number) => `${failed.toLocaleString('en')} failed`,
  overallProgress: 'All uploads',
  percent: (value: number) => `${value}%`,
  sizeOf: (done: string, total: string) => `${done} of ${total}`,
  speed: (perSecond: string) => `${perSecond}/s`,
  timeLeft: (duration: string) => `${duration} left`,
  stateQueued: 'Waiting',
  stateHashing: (percent: number) => `Reading the file… ${percent}%`,
  stateChecking: 'Checking whether it is already stored…',
  stateUploading: 'Uploading',
  stateAdding: 'Adding to the folder…',
  stateDone: 'Uploaded',
  stateInstant: 'Already stored: added without uploading',
  statePaused: 'Paused',
  stateCancelled: 'Cancelled',
  stateError: 'Failed',
  stateWaitingFolder: 'Creating folders…',
  resumedAt: (percent: number) => `resumed at ${percent}%`,
  retryingIn: (seconds: number) => `Connection lost. Trying again in ${plural(seconds, 'second', 'seconds')}…`,
  retryingNow: 'Connection lost. Trying again…',
  errChanged: 'The file changed while it was being uploaded. Choose it again.',
  errNetwork: 'The connection was lost. Try again when you are online.',
  errUnauthorized: 'Your session has ended. Log in again, then add the file again.',
  pause: (name: string) => `Pause ${name}`,
  resume: (name: string) => `Resume ${name}`,
  retry: (name: string) => `Retry ${name}`,
  cancelUpload: (name: string) => `Cancel ${name}`,
  dismissUpload: (name: string) => `Remove ${name} from the list`,
  downloadUploaded: (name: string) => `Download ${name}`,
  downloadFailed: (message: string) => `The download did not start: ${message}`,
  pauseAll: 'Pause all',
  resumeAll: 'Resume all',
  cancelAll: 'Cancel all',
  clearFinished: 'Clear finished',
  closePanel: 'Close uploads',
  showUploads: 'Show uploads',
  hideUploads: 'Hide uploads',
  interruptedTitle: 'Unfinished uploads',
  interruptedHint: 'Add the same files to the same folders again to continue where they stopped.',
  discardInterrupted: (name: string) => `Discard ${name}`,
  announceUploaded: (name: string) => `${name} uploaded.`,
  announceFailed: (name: string) => `${name} failed to upload.`,
  announceAllDone: (total: number) => `All uploads are done: ${plural(total, 'file', 'files')}.`,
  dropHere: (folder: string) => `Drop files or folders to upload them into ${folder}`,
  dropRoot: 'All files',
  dropCurrent: 'this folder',
};

export type UploadMessages = {
  readonly [K in keyof typeof uploadsEn]: (typeof uploadsEn)[K] extends (...args: infer A) => string ? (...args: A) => string : string;
};

const n = (value: number) => value.toLocaleString('zh-CN');

export const uploadsZhCN: UploadMessages = {
  uploadsRegion: '上传',
  uploadsList: '正在上传的文件',
  uploadingCount: (done, total) => `正在上传：已完成 ${n(done)} / ${n(total)} 个文件`,
  uploadedAll: (total) => `已上传 ${n(total)} 个文件`,
  uploadsPausedCount: (paused) => `${n(paused)} 个上传已暂停`,
  failedCount: (failed) => `${n(failed)} 个失败`,
  overallProgress: '全部上传',
  percent: (value) => `${value}%`,
  sizeOf: (done, total) => `${done} / ${total}`,
  speed: (perSecond) => `${perSecond}/秒`,
  timeLeft: (duration) => `剩余 ${duration}`,
  stateQueued: '等待中',
  stateHashing: (percent) => `正在读取文件… ${percent}%`,
  stateChecking: '正在检查是否已存储…',
  stateUploading: '正在上传',
  stateAdding: '正在添加到文件夹…',
  stateDone: '已上传',
  stateInstant: '已存储过：无需上传，秒传完成',
  statePaused: '已暂停',
  stateCancelled: '已取消',
  stateError: '失败',
  stateWaitingFolder: '正在创建文件夹…',
  resumedAt: (percent) => `从 ${percent}% 处继续`,
  retryingIn: (seconds) => `连接中断，${n(seconds)} 秒后重试…`,
  retryingNow: '连接中断，正在重试…',
  errChanged: '上传过程中文件发生了变化，请重新选择。',
  errNetwork: '连接已断开，请在联网后重试。',
  errUnauthorized: '会话已结束。请重新登录，然后再次添加文件。',
  pause: (name) => `暂停 ${name}`,
  resume: (name) => `继续 ${name}`,
  retry: (name) => `重试 ${name}`,
  cancelUpload: (name) => `取消 ${name}`,
  dismissUpload: (name) => `从列表中移除 ${name}`,
  downloadUploaded: (name) => `下载 ${name}`,
  downloadFailed: (message) => `下载未能开始：${message}`,
  pauseAll: '全部暂停',
  resumeAll: '全部继续',
  cancelAll: '全部取消',
  clearFinished: '清除已完成',
  closePanel: '关闭上传面板',
  showUploads: '显示上传',
  hideUploads: '隐藏上传',
  interruptedTitle: '未完成的上传',
  interruptedHint: '将相同的文件再次添加到相同的文件夹，即可从中断处继续。',
  discardInterrupted: (name) => `放弃 ${name}`,
  announceUploaded: (name) => `${name} 已上传。`,
  announceFailed: (name) => `${name} 上传失败。`,
  announceAllDone: (total) => `全部上传完成：${n(total)} 个文件。`,
  dropHere: (folder) => `拖放文件或文件夹，上传到${folder}`,
  dropRoot: '全部文件',
  dropCurrent: '此文件夹',
};

const dictionaries: Readonly<Record<Language, UploadMessages>> = { en: uploadsEn, 'zh-CN': uploadsZhCN };

export function useUploadText(): { readonly u: UploadMessages; readonly language: Language; readonly t: ReturnType<typeof useI18n>['t'] } {
  const { t, language } = useI18n();
  return { u: dictionaries[language], language, t };
}
