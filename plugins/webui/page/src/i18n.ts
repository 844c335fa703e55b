/**
 * Every string the page shows, in English and Chinese; the browser's language picks the table
 * (zh, zh-CN, zh-TW, ... → Chinese; anything else → English). The Chinese table is typed against
 * the English one, so a key missing in either fails the build.
 */

const en = {
  'app.name': 'HomeAgent',
  'nav.chat': 'Chat',
  'nav.home': 'Home',
  'nav.knowledge': 'Knowledge',
  'nav.memory': 'Memory',
  'nav.settings': 'Settings',
  'nav.plugins': 'Plugins',
  'nav.changes': 'Changes',
  'nav.health': 'Health',
  'common.loading': 'Loading…',
  'common.retry': 'Retry',
  'common.save': 'Save',
  'common.reset': 'Reset',
  'common.delete': 'Delete',
  'common.cancel': 'Cancel',
  'common.edit': 'Edit',
  'common.close': 'Close',
  'common.search': 'Search',
  'common.refresh': 'Refresh',
  'common.logout': 'Log out',
  'common.live': 'live',
  'common.offline': 'offline',
  'common.confirm_delete': 'Delete {name}?',
  'common.empty': 'Nothing here yet.',
  'login.password': 'Password',
  'login.submit': 'Log in',
  'login.hint': 'The password was printed when HomeAgent first started; `homeagentctl webui credentials` shows it again.',
  'chat.placeholder': 'Ask HomeAgent…',
  'chat.send': 'Send',
  'chat.empty': 'Say something to start a conversation.',
  'chat.you': 'You',
  'chat.agent': 'HomeAgent',
  'chat.thinking': 'Thinking…',
  'chat.tool_call': 'Tool call',
  'chat.arguments': 'Arguments',
  'chat.result': 'Result',
  'chat.running': 'running…',
  'chat.failed': 'failed',
  'chat.skipped': 'Not answered: {reason}',
  'chat.elsewhere': '(sent from another window)',
  'chat.message': 'Message',
  'chat.tokens': '{count} token|{count} tokens',
  'home.no_area': 'Other',
  'home.empty': 'No devices yet. Configure GPIO pins, I2C sensors or MQTT devices in the settings.',
  'home.on': 'On',
  'home.off': 'Off',
  'home.unknown': 'unknown',
  'home.history': 'History of {name}',
  'home.history_empty': 'No stored values in the last 24 hours.',
  'home.history_text': 'This sensor reports text; its last values:',
  'home.changed': 'changed {time}',
  'kb.search_placeholder': 'Search the library',
  'kb.scope': 'In: {category}',
  'kb.whole': 'Whole library',
  'kb.categories': 'Categories',
  'kb.empty': 'The library is empty. Create the first entry below.',
  'kb.no_hits': 'Nothing found.',
  'kb.new': 'New entry',
  'kb.name': 'Name (category/…/entry)',
  'kb.content': 'Content (markdown)',
  'kb.overwrite': 'Replace an existing entry',
  'kb.create': 'Create',
  'kb.created': 'Created {name}',
  'kb.attachments': 'Attachments',
  'kb.count': '{count}',
  'mem.search_placeholder': 'What does HomeAgent remember about…',
  'mem.recall': 'Recall',
  'mem.abstain': 'Nothing remembered that relates to this.',
  'mem.entities': 'Entities',
  'mem.filter': 'Filter by name',
  'mem.no_entities': 'No entities remembered yet.',
  'mem.facts': 'Facts',
  'mem.superseded': 'Superseded',
  'mem.no_facts': 'No facts about this entity.',
  'mem.provenance': 'Where it came from',
  'mem.original': 'Original input',
  'mem.confidence': 'confidence {value}',
  'mem.mentions': '{count} mention|{count} mentions',
  'mem.relations': '{count} fact|{count} facts',
  'mem.subject': 'Subject',
  'mem.relation': 'Relation',
  'mem.object': 'Object',
  'mem.more': 'More',
  'mem.sources': 'Sources',
  'mem.aliases': 'Also called: {names}',
  'set.filter': 'Filter settings',
  'set.restart': 'needs restart',
  'set.restart_pending': 'restart pending',
  'set.secret_placeholder': 'unchanged (secret)',
  'set.saved': 'Saved',
  'set.default': 'default {value}',
  'set.source': 'from {source}',
  'set.file_only': 'Only the configuration file sets this.',
  'set.range': '{min} – {max}',
  'set.invalid_json': 'Not valid JSON: {problem}',
  'set.masked': 'Type the real values where {mask} stands for a secret before saving.',
  'plug.enable': 'Enable',
  'plug.disable': 'Disable',
  'plug.reload': 'Reload',
  'plug.install': 'Install from file (.tgz, .zip)',
  'plug.install_button': 'Install',
  'plug.installed': 'Installed {name}',
  'plug.tools': 'Tools: {names}',
  'plug.rejected': 'Refused folders',
  'ch.unavailable': 'The change tracker is not available in this version.',
  'ch.empty': 'No changes recorded.',
  'ch.diff': 'Diff',
  'ch.rollback': 'Roll back',
  'ch.confirm_rollback': 'Roll back change {id}?',
  'ch.rolled_back': 'Rolled back.',
  'hl.healthy': 'Healthy',
  'hl.unhealthy': 'Not healthy',
  'hl.checks': 'Checks',
  'hl.status': 'Status',
  'hl.version': 'Version {version}, process {pid}',
  'hl.uptime': 'Up for {time}',
  'hl.memory': 'Memory {rss} (heap {heap})',
  'hl.notices': 'Notices',
  'hl.services': 'Services',
  'hl.restart_pending': 'Waiting for a restart: {keys}',
  'hl.logs': 'Recent logs',
  'hl.level': 'Level',
  'hl.all_levels': 'all',
  'hl.filter': 'Filter text',
  'hl.audit': 'Audit only',
  'hl.dropped': 'One older line was dropped.|{count} older lines were dropped.',
} as const;

export type StringKey = keyof typeof en;

const zh: Record<StringKey, string> = {
  'app.name': 'HomeAgent',
  'nav.chat': '对话',
  'nav.home': '家居',
  'nav.knowledge': '知识库',
  'nav.memory': '记忆',
  'nav.settings': '设置',
  'nav.plugins': '插件',
  'nav.changes': '变更',
  'nav.health': '状态',
  'common.loading': '加载中…',
  'common.retry': '重试',
  'common.save': '保存',
  'common.reset': '恢复默认',
  'common.delete': '删除',
  'common.cancel': '取消',
  'common.edit': '编辑',
  'common.close': '关闭',
  'common.search': '搜索',
  'common.refresh': '刷新',
  'common.logout': '退出登录',
  'common.live': '在线',
  'common.offline': '离线',
  'common.confirm_delete': '删除 {name}？',
  'common.empty': '这里还没有内容。',
  'login.password': '密码',
  'login.submit': '登录',
  'login.hint': '密码在 HomeAgent 首次启动时打印；`homeagentctl webui credentials` 可再次显示。',
  'chat.placeholder': '问 HomeAgent…',
  'chat.send': '发送',
  'chat.empty': '说点什么开始对话吧。',
  'chat.you': '你',
  'chat.agent': 'HomeAgent',
  'chat.thinking': '思考中…',
  'chat.tool_call': '工具调用',
  'chat.arguments': '参数',
  'chat.result': '结果',
  'chat.running': '运行中…',
  'chat.failed': '失败',
  'chat.skipped': '未回答：{reason}',
  'chat.elsewhere': '（来自另一个窗口）',
  'chat.message': '消息',
  'chat.tokens': '{count} 个 token',
  'home.no_area': '其他',
  'home.empty': '还没有设备。请在设置中配置 GPIO 引脚、I2C 传感器或 MQTT 设备。',
  'home.on': '开',
  'home.off': '关',
  'home.unknown': '未知',
  'home.history': '{name} 的历史',
  'home.history_empty': '最近 24 小时没有记录。',
  'home.history_text': '该传感器报告文本，最近的值：',
  'home.changed': '{time} 变化',
  'kb.search_placeholder': '搜索知识库',
  'kb.scope': '范围：{category}',
  'kb.whole': '整个知识库',
  'kb.categories': '分类',
  'kb.empty': '知识库是空的。在下面创建第一个条目。',
  'kb.no_hits': '没有找到。',
  'kb.new': '新条目',
  'kb.name': '名称（分类/…/条目）',
  'kb.content': '内容（Markdown）',
  'kb.overwrite': '替换已有条目',
  'kb.create': '创建',
  'kb.created': '已创建 {name}',
  'kb.attachments': '附件',
  'kb.count': '{count}',
  'mem.search_placeholder': 'HomeAgent 记得关于……的什么',
  'mem.recall': '回忆',
  'mem.abstain': '没有相关的记忆。',
  'mem.entities': '实体',
  'mem.filter': '按名称筛选',
  'mem.no_entities': '还没有记住任何实体。',
  'mem.facts': '事实',
  'mem.superseded': '已被取代',
  'mem.no_facts': '关于这个实体没有事实。',
  'mem.provenance': '来源',
  'mem.original': '原始输入',
  'mem.confidence': '置信度 {value}',
  'mem.mentions': '提及 {count} 次',
  'mem.relations': '{count} 条事实',
  'mem.subject': '主体',
  'mem.relation': '关系',
  'mem.object': '客体',
  'mem.more': '更多',
  'mem.sources': '来源',
  'mem.aliases': '别名：{names}',
  'set.filter': '筛选设置',
  'set.restart': '需要重启',
  'set.restart_pending': '等待重启',
  'set.secret_placeholder': '未更改（密钥）',
  'set.saved': '已保存',
  'set.default': '默认 {value}',
  'set.source': '来自 {source}',
  'set.file_only': '只能在配置文件中设置。',
  'set.range': '{min} – {max}',
  'set.invalid_json': '不是有效的 JSON：{problem}',
  'set.masked': '保存前请把代表密钥的 {mask} 替换为真实值。',
  'plug.enable': '启用',
  'plug.disable': '停用',
  'plug.reload': '重新加载',
  'plug.install': '从文件安装（.tgz、.zip）',
  'plug.install_button': '安装',
  'plug.installed': '已安装 {name}',
  'plug.tools': '工具：{names}',
  'plug.rejected': '被拒绝的文件夹',
  'ch.unavailable': '此版本没有变更跟踪功能。',
  'ch.empty': '没有记录的变更。',
  'ch.diff': '差异',
  'ch.rollback': '回滚',
  'ch.confirm_rollback': '回滚变更 {id}？',
  'ch.rolled_back': '已回滚。',
  'hl.healthy': '健康',
  'hl.unhealthy': '不健康',
  'hl.checks': '检查',
  'hl.status': '状态',
  'hl.version': '版本 {version}，进程 {pid}',
  'hl.uptime': '已运行 {time}',
  'hl.memory': '内存 {rss}（堆 {heap}）',
  'hl.notices': '通知',
  'hl.services': '服务',
  'hl.restart_pending': '等待重启：{keys}',
  'hl.logs': '最近日志',
  'hl.level': '级别',
  'hl.all_levels': '全部',
  'hl.filter': '筛选文本',
  'hl.audit': '仅审计记录',
  'hl.dropped': '已丢弃 {count} 行较早的日志。',
};

/** The language the page speaks: Chinese for zh* browsers, else English. */
export function pickLanguage(languages: readonly string[]): 'zh' | 'en' {
  const first = languages[0] ?? 'en';
  return first.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

const browserLanguages = typeof navigator === 'undefined' ? [] : navigator.languages?.length ? navigator.languages : [navigator.language];
export const LANGUAGE = pickLanguage(browserLanguages);
const table: Record<StringKey, string> = LANGUAGE === 'zh' ? zh : en;

/** The string for `key` with `{name}` placeholders filled from `vars`. */
/** A string with `one|other` forms (English plurals) picks by `vars.count`; Chinese strings have one form. */
export function t(key: StringKey, vars: Record<string, string | number> = {}): string {
  const forms = table[key].split('|');
  const text = (forms.length === 2 && vars.count === 1 ? forms[0] : forms.at(-1)) ?? '';
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

/** "3 min ago" / "3 分钟前" through the browser's own relative-time wording. */
export function relativeTime(ms: number, now = Date.now()): string {
  const seconds = Math.round((ms - now) / 1000);
  const format = new Intl.RelativeTimeFormat(LANGUAGE, { numeric: 'auto' });
  const abs = Math.abs(seconds);
  if (abs < 60) return format.format(seconds, 'second');
  if (abs < 3600) return format.format(Math.round(seconds / 60), 'minute');
  if (abs < 86400) return format.format(Math.round(seconds / 3600), 'hour');
  return format.format(Math.round(seconds / 86400), 'day');
}

/** 3725 s → "1 h 2 min". */
export function duration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const parts = d > 0 ? [`${d} d`, `${h} h`] : h > 0 ? [`${h} h`, `${m} min`] : [`${m} min`, `${Math.floor(seconds % 60)} s`];
  return parts.join(' ');
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Local date and time in the page's language. */
export function dateTime(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return '';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString(LANGUAGE);
}
