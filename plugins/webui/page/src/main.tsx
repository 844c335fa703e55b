/**
 * The page's shell: it asks the server whether this browser is logged in, shows the login form
 * until it is, then the navigation and the current view. A 401 from any request (the session
 * expired or was ended elsewhere) brings the login form back.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, onUnauthorized } from './api';
import { Approvals } from './approvals';
import { startChat } from './chat-store';
import { connectEvents, disconnectEvents, useConnected } from './events';
import { LANGUAGE, t } from './i18n';
import { AgentsView } from './pages/agents';
import { ChangesView } from './pages/changes';
import { ChatView } from './pages/chat';
import { GraphView } from './pages/graph';
import { HealthView } from './pages/health';
import { HomeView } from './pages/home';
import { KnowledgeView } from './pages/knowledge';
import { LoginView } from './pages/login';
import { MemoryView } from './pages/memory';
import { PluginsView } from './pages/plugins';
import { SequencesView } from './pages/sequences';
import { SettingsView } from './pages/settings';
import { type Route, useRoute } from './router';
import { TabBar } from './tab-bar';
import type { SessionInfo } from './types';
import { ActionButton } from './ui';
import './styles.css';

type SessionState = 'checking' | 'in' | 'out';

function App() {
  const [session, setSession] = useState<SessionState>('checking');

  useEffect(() => {
    api
      .get<SessionInfo>('/auth/session')
      .then((s) => setSession(s.authenticated ? 'in' : 'out'))
      .catch(() => setSession('out'));
    return onUnauthorized(() => setSession('out'));
  }, []);

  useEffect(() => {
    if (session !== 'in') return;
    connectEvents();
    const stopChat = startChat();
    return () => {
      stopChat();
      disconnectEvents();
    };
  }, [session]);

  if (session === 'checking') return <p class="muted center">{t('common.loading')}</p>;
  if (session === 'out') return <LoginView onLogin={() => setSession('in')} />;
  return <Shell onLogout={() => setSession('out')} />;
}

function Shell({ onLogout }: { onLogout: () => void }) {
  const route = useRoute();
  const connected = useConnected();
  return (
    <div class="shell">
      <header class="top">
        <span class="brand">{t('app.name')}</span>
        <span class={connected ? 'dot live' : 'dot'} title={connected ? t('common.live') : t('common.offline')} data-testid="stream-status">
          {connected ? t('common.live') : t('common.offline')}
        </span>
        <ActionButton class="link" action={() => api.post('/auth/logout').finally(onLogout)}>
          {t('common.logout')}
        </ActionButton>
      </header>
      <TabBar active={route.view} />
      <main>
        <Approvals />
        <CurrentView route={route} />
      </main>
    </div>
  );
}

function CurrentView({ route }: { route: Route }) {
  switch (route.view) {
    case 'chat':
      return <ChatView />;
    case 'home':
      return <HomeView />;
    case 'knowledge':
      return <KnowledgeView />;
    case 'memory':
      return <MemoryView entity={route.arg} />;
    case 'graph':
      return <GraphView centre={route.arg} />;
    case 'settings':
      return <SettingsView />;
    case 'plugins':
      return <PluginsView />;
    case 'changes':
      return <ChangesView />;
    case 'sequences':
      return <SequencesView />;
    case 'agents':
      return <AgentsView />;
    case 'health':
      return <HealthView />;
  }
}

document.documentElement.lang = LANGUAGE === 'zh' ? 'zh-CN' : 'en';
const root = document.getElementById('app');
if (root) render(<App />, root);
