/**
 * Which function carries out each operation of the catalog. The mapped type makes the compiler
 * refuse a catalog operation without a handler.
 */
import type { OperationName } from '../catalog/operations';
import type { Handler } from './context';
import { fileDownload } from './downloads';
import { notImplemented } from './errors';
import { fileAdd } from './file-add';
import { fileRename, folderAdd, folderRename, move } from './folders';
import { fileSearch, getFiles, getFilesWhitPath, getLinkFiles, getNewUploadFiles, getRecycleFiles, getShareFiles } from './listings';
import { folderAndFileDelete, folderAndFileRestore, folderDelete, recycleEmpty } from './recycle-bin';
import { apiLogin, login, logout } from './sessions';

/**
 * Operations whose behaviour belongs to a later issue: bound, authenticated and signed like the
 * others, then answered with code 501 so that no client mistakes them for working ones.
 */
function notYetImplemented<N extends OperationName>(name: N): Handler<N> {
  return async () => {
    throw notImplemented(name);
  };
}

export const handlers: { readonly [N in OperationName]: Handler<N> } = {
  Login: login,
  APILogin: apiLogin,
  Logout: logout,
  FolderAndFileDelete: folderAndFileDelete,
  FolderDelete: folderDelete,
  FolderAndFileRestore: folderAndFileRestore,
  FolderShare: notYetImplemented('FolderShare'),
  FileShare: notYetImplemented('FileShare'),
  FolderEncrypt: notYetImplemented('FolderEncrypt'),
  FileEncrypt: notYetImplemented('FileEncrypt'),
  FileAdd: fileAdd,
  FolderRename: folderRename,
  ShareImageUpload: notYetImplemented('ShareImageUpload'),
  GetFolderEmailShareInfo: notYetImplemented('GetFolderEmailShareInfo'),
  GetFileEmailShareInfo: notYetImplemented('GetFileEmailShareInfo'),
  FolderEmailShare: notYetImplemented('FolderEmailShare'),
  FolderAdd: folderAdd,
  FileRename: fileRename,
  Move: move,
  RecycleEmpty: recycleEmpty,
  FileDownload: fileDownload,
  Unshare: notYetImplemented('Unshare'),
  FileEmailShare: notYetImplemented('FileEmailShare'),
  FileLink: notYetImplemented('FileLink'),
  FileUnlink: notYetImplemented('FileUnlink'),
  Unlock: notYetImplemented('Unlock'),
  Decrypt: notYetImplemented('Decrypt'),
  GetFiles: getFiles,
  GetFilesWhitPath: getFilesWhitPath,
  GetNewUploadFiles: getNewUploadFiles,
  FileSearch: fileSearch,
  GetRecycleFiles: getRecycleFiles,
  GetShareFiles: getShareFiles,
  GetLinkFiles: getLinkFiles,
  ShareOpen: notYetImplemented('ShareOpen'),
  ShareList: notYetImplemented('ShareList'),
  ShareDownload: notYetImplemented('ShareDownload'),
};
