/**
 * Which function carries out each operation of the catalog. The mapped type makes the compiler
 * refuse a catalog operation without a handler.
 */
import type { OperationName } from '../catalog/operations';
import type { Handler } from './context';
import { notImplemented } from './errors';
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
  FolderAndFileDelete: notYetImplemented('FolderAndFileDelete'),
  FolderDelete: notYetImplemented('FolderDelete'),
  FolderAndFileRestore: notYetImplemented('FolderAndFileRestore'),
  FolderShare: notYetImplemented('FolderShare'),
  FileShare: notYetImplemented('FileShare'),
  FolderEncrypt: notYetImplemented('FolderEncrypt'),
  FileEncrypt: notYetImplemented('FileEncrypt'),
  FileAdd: notYetImplemented('FileAdd'),
  FolderRename: notYetImplemented('FolderRename'),
  ShareImageUpload: notYetImplemented('ShareImageUpload'),
  GetFolderEmailShareInfo: notYetImplemented('GetFolderEmailShareInfo'),
  GetFileEmailShareInfo: notYetImplemented('GetFileEmailShareInfo'),
  FolderEmailShare: notYetImplemented('FolderEmailShare'),
  FolderAdd: notYetImplemented('FolderAdd'),
  FileRename: notYetImplemented('FileRename'),
  Move: notYetImplemented('Move'),
  RecycleEmpty: notYetImplemented('RecycleEmpty'),
  FileDownload: notYetImplemented('FileDownload'),
  Unshare: notYetImplemented('Unshare'),
  FileEmailShare: notYetImplemented('FileEmailShare'),
  FileLink: notYetImplemented('FileLink'),
  FileUnlink: notYetImplemented('FileUnlink'),
  Unlock: notYetImplemented('Unlock'),
  Decrypt: notYetImplemented('Decrypt'),
  GetFiles: notYetImplemented('GetFiles'),
  GetFilesWhitPath: notYetImplemented('GetFilesWhitPath'),
  GetNewUploadFiles: notYetImplemented('GetNewUploadFiles'),
  FileSearch: notYetImplemented('FileSearch'),
  GetRecycleFiles: notYetImplemented('GetRecycleFiles'),
  GetShareFiles: notYetImplemented('GetShareFiles'),
  GetLinkFiles: notYetImplemented('GetLinkFiles'),
  ShareOpen: notYetImplemented('ShareOpen'),
  ShareList: notYetImplemented('ShareList'),
  ShareDownload: notYetImplemented('ShareDownload'),
};
