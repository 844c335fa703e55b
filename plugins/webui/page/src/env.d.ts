/** Vite turns CSS imports into <link> tags; the page only imports them for that side effect. */
declare module '*.css';
