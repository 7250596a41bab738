/** The file viewer's messages, English and Simplified Chinese, kept apart as uploads.ts is. */
import { useI18n, type Language } from './index';

export const viewerEn = {
  preview: 'Preview',
  viewerTitle: (name: string, position: number, total: number) => `${name} (${position} of ${total})`,
  previousFile: 'Previous file',
  nextFile: 'Next file',
  closeViewer: 'Close',
  details: 'Details',
  detailsName: 'Name',
  detailsSize: 'Size',
  detailsTime: 'Modified',
  detailsPath: 'Path',
  zoom: 'Zoom',
  zoomIn: 'Zoom in',
  zoomOut: 'Zoom out',
  zoomFit: 'Fit to window',
  zoomLevel: (percent: number) => `${percent}%`,
  previousPage: 'Previous page',
  nextPage: 'Next page',
  pageOf: (page: number, pages: number) => `Page ${page} of ${pages}`,
  loadingPreview: 'Loading the preview…',
  textCut: 'Showing the first 1 MiB.',
  noPreview: 'There is no preview for this type of file. Download it to open it.',
  previewFailed: 'This file cannot be previewed. Download it to open it.',
};

export type ViewerMessages = { readonly [K in keyof typeof viewerEn]: (typeof viewerEn)[K] };

const viewerZhCN: ViewerMessages = {
  preview: '预览',
  viewerTitle: (name, position, total) => `${name}（第 ${position} 个，共 ${total} 个）`,
  previousFile: '上一个文件',
  nextFile: '下一个文件',
  closeViewer: '关闭',
  details: '详细信息',
  detailsName: '名称',
  detailsSize: '大小',
  detailsTime: '修改时间',
  detailsPath: '路径',
  zoom: '缩放',
  zoomIn: '放大',
  zoomOut: '缩小',
  zoomFit: '适合窗口',
  zoomLevel: (percent) => `${percent}%`,
  previousPage: '上一页',
  nextPage: '下一页',
  pageOf: (page, pages) => `第 ${page} 页，共 ${pages} 页`,
  loadingPreview: '正在加载预览…',
  textCut: '仅显示前 1 MiB。',
  noPreview: '此类文件无法预览。请下载后打开。',
  previewFailed: '无法预览此文件。请下载后打开。',
};

const dictionaries: Readonly<Record<Language, ViewerMessages>> = { en: viewerEn, 'zh-CN': viewerZhCN };

export function useViewerText(): { readonly v: ViewerMessages; readonly language: Language; readonly t: ReturnType<typeof useI18n>['t'] } {
  const { t, language } = useI18n();
  return { v: dictionaries[language], language, t };
}
