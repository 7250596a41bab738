/** Uploads and downloads for components; the engine is a chunk of its own, fetched just after the first render. */
import { useSyncExternalStore } from 'react';
import type { Item } from '../api/results';
import { createListeners } from '../lib/listeners';
import { captureDrop } from './dropped-files';
import type { UploadSnapshot } from './types';

type UploadEngine = typeof import('./app-uploads');

let engine: UploadEngine | undefined;
let loadingEngine: Promise<UploadEngine> | undefined;
const { subscribe, emit: notifyListeners } = createListeners();

/** The upload engine, fetched once; its queue's changes reach useUploadSnapshot's subscribers. */
export function loadUploadEngine(): Promise<UploadEngine> {
  loadingEngine ??= import('./app-uploads').then((module) => {
    engine = module;
    module.uploadQueue.subscribe(notifyListeners);
    notifyListeners();
    return module;
  });
  return loadingEngine;
}

const NO_UPLOADS: UploadSnapshot = {
  items: [],
  totals: { files: 0, done: 0, failed: 0, active: 0, paused: 0, bytes: 0, uploaded: 0, speed: 0 },
  interrupted: [],
};

export interface Uploads {
  /** Opens the file picker; the chosen files are uploaded into `folderId` (0 = the root). */
  pickFiles(folderId: number): void;
  /** Opens the folder picker; the chosen folder is recreated in `folderId` and its files uploaded. */
  pickFolder(folderId: number): void;
  /** Call it during the drop event (the DataTransfer is readable only then) and preventDefault(), which tells the page-wide zone it was handled. */
  addDropped(folderId: number, dataTransfer: DataTransfer): void;
  /** Asks for a download URL (FileDownload) and starts the browser's download; rejects with an ApiError. */
  downloadFile(fileId: number): Promise<void>;
  /** Folders and files as one ZIP (ZipDownload); rejects with an ApiError (423 for locked encrypted items). */
  downloadZip(items: readonly Item[]): Promise<void>;
}

export type PickerKind = 'files' | 'folder';

/** The folder the open picker uploads into; null when the input was filled some other way (a test). */
let pickerTarget: number | null = null;

/** The pickers UploadRoot mounts (so that tests can fill them); a detached input otherwise. */
function pickerInput(kind: PickerKind): HTMLInputElement {
  const mounted = document.querySelector<HTMLInputElement>(`input[data-upload-picker="${kind}"]`);
  if (mounted) return mounted;
  const input = document.createElement('input');
  input.type = 'file';
  input.multiple = true;
  if (kind === 'folder') input.webkitdirectory = true;
  input.addEventListener('change', () => takePicked(input, 0));
  return input;
}

function openPicker(kind: PickerKind, folderId: number) {
  const input = pickerInput(kind);
  pickerTarget = folderId;
  input.value = '';
  input.click();
}

/** The change handler of a picker input: queues its files into the picker's folder (or `fallbackFolder`). */
export function takePicked(input: HTMLInputElement, fallbackFolder: number) {
  const files = input.files ? Array.from(input.files) : [];
  const folderId = pickerTarget ?? fallbackFolder;
  pickerTarget = null;
  input.value = '';
  if (files.length > 0) void loadUploadEngine().then((upload) => upload.uploadPicked(folderId, files));
}

/** The picker was closed without a choice. */
export function pickerCancelled() {
  pickerTarget = null;
}

const uploads: Uploads = {
  pickFiles: (folderId) => openPicker('files', folderId),
  pickFolder: (folderId) => openPicker('folder', folderId),
  addDropped: (folderId, dataTransfer) => {
    // What was dropped must be taken during the event; the folders are walked once the engine is there.
    const walk = captureDrop(dataTransfer);
    void loadUploadEngine().then((upload) => upload.uploadDropped(folderId, walk));
  },
  downloadFile: (fileId) => loadUploadEngine().then((upload) => upload.downloadFile(fileId)),
  downloadZip: (items) => loadUploadEngine().then((upload) => upload.downloadZip(items)),
};

export function useUploads(): Uploads {
  return uploads;
}

/** The queue's state, re-rendering on changes (progress at most every 200 ms). */
export function useUploadSnapshot(): UploadSnapshot {
  return useSyncExternalStore(subscribeToUploads, uploadSnapshot);
}

function subscribeToUploads(listener: () => void): () => void {
  const unsubscribe = subscribe(listener);
  void loadUploadEngine();
  return unsubscribe;
}

function uploadSnapshot(): UploadSnapshot {
  return engine ? engine.uploadQueue.getSnapshot() : NO_UPLOADS;
}
