/** Which function carries out each catalog operation; the mapped type refuses a catalog operation without one. */
import type { OperationName } from '../catalog/operations';
import type { Handler } from './context';
import { fileDownload, filePreview } from './content/downloads';
import { zipDownload } from './content/zip-downloads';
import { fileEmailShare, folderEmailShare, getFileEmailShareInfo, getFolderEmailShareInfo } from './sharing/email-shares';
import { decrypt, fileEncrypt, folderEncrypt, lock, unlock } from './encryption/encryption';
import { fileAdd } from './content/file-add';
import { copy } from './tree/copy';
import { namesTaken } from './tree/names-taken';
import { fileRename, folderAdd, folderRename, move } from './tree/folders';
import { fileLink, fileUnlink } from './sharing/links';
import { fileSearch, folderSearch, getFiles, getFilesWhitPath, getLinkFiles, getNewUploadFiles, getRecycleFiles, getShareFiles } from './tree/listings';
import { folderAndFileDelete, folderAndFileRestore, folderDelete, recycleEmpty } from './tree/recycle-bin';
import { shareImageUpload } from './sharing/share-images';
import { shareDownload, shareList, shareOpen, sharePreview, shareZipDownload } from './sharing/share-service';
import { shareThumbnailBase, thumbnailBase } from './previews/thumbnails';
import { fileShare, folderShare, unshare } from './sharing/shares';
import { apiLogin, login, logout } from './accounts/sessions';
import { getAccountInfo } from './accounts/account-reads';

export const handlers: { readonly [N in OperationName]: Handler<N> } = {
  Login: login,
  APILogin: apiLogin,
  Logout: logout,
  FolderAndFileDelete: folderAndFileDelete,
  FolderDelete: folderDelete,
  FolderAndFileRestore: folderAndFileRestore,
  FolderShare: folderShare,
  FileShare: fileShare,
  FolderEncrypt: folderEncrypt,
  FileEncrypt: fileEncrypt,
  FileAdd: fileAdd,
  FolderRename: folderRename,
  ShareImageUpload: shareImageUpload,
  GetFolderEmailShareInfo: getFolderEmailShareInfo,
  GetFileEmailShareInfo: getFileEmailShareInfo,
  FolderEmailShare: folderEmailShare,
  FolderAdd: folderAdd,
  FileRename: fileRename,
  Move: move,
  Copy: copy,
  NamesTaken: namesTaken,
  RecycleEmpty: recycleEmpty,
  FileDownload: fileDownload,
  ZipDownload: zipDownload,
  Unshare: unshare,
  FileEmailShare: fileEmailShare,
  FileLink: fileLink,
  FileUnlink: fileUnlink,
  Unlock: unlock,
  Lock: lock,
  Decrypt: decrypt,
  GetAccountInfo: getAccountInfo,
  GetFiles: getFiles,
  GetFilesWhitPath: getFilesWhitPath,
  GetNewUploadFiles: getNewUploadFiles,
  FileSearch: fileSearch,
  FolderSearch: folderSearch,
  GetRecycleFiles: getRecycleFiles,
  GetShareFiles: getShareFiles,
  GetLinkFiles: getLinkFiles,
  ShareOpen: shareOpen,
  ShareList: shareList,
  ShareDownload: shareDownload,
  ShareZipDownload: shareZipDownload,
  FilePreview: filePreview,
  SharePreview: sharePreview,
  ThumbnailBase: thumbnailBase,
  ShareThumbnailBase: shareThumbnailBase,
};
