import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPython, expandVariables, resolveInterpreter, serverCommandLine } from '../interpreter';

describe('resolveInterpreter', () => {
  it('prefers the memls.interpreter setting over the Python extension', () => {
    const r = resolveInterpreter({
      setting: ['/opt/venv/bin/python'],
      pythonExtension: { executable: '/usr/bin/python3.12', version: { major: 3, minor: 12 } },
      platform: 'linux',
    });
    assert.deepEqual(r, { command: '/opt/venv/bin/python', args: [], source: 'setting', notes: [] });
  });

  it('keeps extra words of the setting as interpreter arguments', () => {
    const r = resolveInterpreter({ setting: ['uv', 'run', 'python'], platform: 'linux' });
    assert.equal(r.command, 'uv');
    assert.deepEqual(r.args, ['run', 'python']);
    assert.deepEqual(serverCommandLine(r), { command: 'uv', args: ['run', 'python', '-m', 'memls.lsp'] });
  });

  it('expands variables in the setting', () => {
    const r = resolveInterpreter({
      setting: ['${workspaceFolder}/.venv/bin/python'],
      expansion: { workspaceFolder: '/proj' },
    });
    assert.equal(r.command, '/proj/.venv/bin/python');
  });

  it('ignores an empty or malformed setting', () => {
    for (const setting of [[], [''], ['  '], [3, null], undefined, {}]) {
      const r = resolveInterpreter({ setting, platform: 'linux' });
      assert.equal(r.source, 'default', `setting ${JSON.stringify(setting)}`);
    }
    assert.equal(resolveInterpreter({ setting: [3, '/x/python'] }).command, '/x/python');
  });

  it('accepts a plain string setting from a hand-edited settings.json', () => {
    assert.equal(resolveInterpreter({ setting: ' /x/python ' }).command, '/x/python');
  });

  it('uses the Python extension environment when the setting is empty', () => {
    const r = resolveInterpreter({
      setting: [],
      pythonExtension: { executable: '/home/u/.venv/bin/python', version: { major: 3, minor: 11 } },
      platform: 'linux',
    });
    assert.equal(r.command, '/home/u/.venv/bin/python');
    assert.equal(r.source, 'python-extension');
  });

  it('uses the Python extension environment when its version is unknown', () => {
    const r = resolveInterpreter({ pythonExtension: { executable: '/e/python' } });
    assert.equal(r.source, 'python-extension');
  });

  it('falls back, with a note, when the Python extension environment is too old', () => {
    const r = resolveInterpreter({
      pythonExtension: { executable: '/usr/bin/python3.8', version: { major: 3, minor: 8 } },
      platform: 'linux',
    });
    assert.equal(r.command, 'python3');
    assert.equal(r.source, 'default');
    assert.equal(r.notes.length, 1);
    assert.match(r.notes[0], /3\.8.*3\.11/);
  });

  it('skips a Python extension environment without an executable', () => {
    const r = resolveInterpreter({ pythonExtension: { executable: '' }, platform: 'darwin' });
    assert.deepEqual(r, { command: 'python3', args: [], source: 'default', notes: [] });
  });

  it('falls back to python3, or python on Windows', () => {
    assert.equal(resolveInterpreter({ platform: 'linux' }).command, 'python3');
    assert.equal(resolveInterpreter({ platform: 'win32' }).command, 'python');
    assert.equal(defaultPython(undefined), 'python3');
  });

  it('starts the memls.lsp module', () => {
    const line = serverCommandLine(resolveInterpreter({ platform: 'linux' }));
    assert.deepEqual(line, { command: 'python3', args: ['-m', 'memls.lsp'] });
  });
});

describe('expandVariables', () => {
  const ctx = { workspaceFolder: '/w', userHome: '/home/u', env: { VENV: '/v' } };

  it('expands the known variables and a leading tilde', () => {
    assert.equal(expandVariables('${userHome}/py', ctx), '/home/u/py');
    assert.equal(expandVariables('~/py', ctx), '/home/u/py');
    assert.equal(expandVariables('~', ctx), '/home/u');
    assert.equal(expandVariables('${env:VENV}/bin/python', ctx), '/v/bin/python');
    assert.equal(expandVariables('${env:MISSING}x', ctx), 'x');
  });

  it('leaves a tilde inside a path and unknown variables alone', () => {
    assert.equal(expandVariables('/a/~b', ctx), '/a/~b');
    assert.equal(expandVariables('${config:python.path}', ctx), '${config:python.path}');
    assert.equal(expandVariables('${workspaceFolder}', {}), '${workspaceFolder}');
  });
});
