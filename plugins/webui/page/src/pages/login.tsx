/**
 * The login form: the admin password from the first start. A wrong password (401) or too many
 * attempts (429) show the server's own message, so the person learns how long to wait.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { t } from '../i18n';
import { ErrorLine, useSubmit } from '../ui';

export function LoginView({ onLogin }: { onLogin: () => void }) {
  const [password, setPassword] = useState('');
  const submit = useSubmit(async () => {
    await api.post('/auth/login', { password });
    setPassword('');
    onLogin();
  });
  return (
    <form class="login card" onSubmit={submit.onSubmit}>
      <h1>{t('app.name')}</h1>
      {/* The one account has no name; this lets password managers file the password under it. */}
      <input type="text" name="username" autocomplete="username" value="admin" hidden readOnly />
      <label>
        {t('login.password')}
        <input
          type="password"
          name="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
      </label>
      <button type="submit" class="primary" disabled={submit.busy || password === ''}>
        {t('login.submit')}
      </button>
      <ErrorLine error={submit.error} />
      <p class="muted small">{t('login.hint')}</p>
    </form>
  );
}
