; Inno Setup 6 script: dist\EvalDesk-<version>-setup.exe around the PyInstaller folder dist\EvalDesk\.
; Built by installers/build.py on Windows (see installers/windows/README.md), which runs:
;   iscc /DMyAppVersion=0.1.0 installers\windows\evaldesk.iss
; What it gives (each point names the Inno Setup help topic to check it against,
; https://jrsoftware.org/ishelp/):
;   * a per-user install that never asks for administrator rights, in
;     %LOCALAPPDATA%\Programs\EvalDesk ([Setup] PrivilegesRequired, constants {autopf}/{userpf});
;   * the whole app folder, including the two bundled models, where the app looks for them
;     ([Files] below);
;   * a Start-menu entry, an optional desktop icon, .evaldesk project files opening in EvalDesk
;     (HKEY_CURRENT_USER only: [Registry]);
;   * an uninstaller in Settings -> Apps that removes the program and the file association and
;     leaves the user's projects and settings alone ([UninstallDelete], [Registry] flags).

#ifndef MyAppVersion
  #define MyAppVersion "0.1.0"
#endif
#define MyAppName "EvalDesk"
#define MyAppExe "evaldesk.exe"
#define SourceDir "..\..\dist\EvalDesk"
#define IconFile AddBackslash(SourcePath) + "..\..\build\icons\evaldesk.ico"

[Setup]
AppId={{6C2E7F1A-3B4D-4E8A-9C51-0E7A1DE5C001}
AppName={#MyAppName}
AppVersion={#MyAppVersion}
AppPublisher=EvalDesk
; PrivilegesRequired=lowest: Setup does not request elevation "even if it was started by a member
; of the Administrators group and will always run in non administrative install mode" (help topic
; "[Setup]: PrivilegesRequired"). No PrivilegesRequiredOverridesAllowed line, so the user is not
; offered an all-users install either: teachers and clinicians on managed computers usually have
; no administrator rights.
PrivilegesRequired=lowest
; In non administrative install mode the "auto" constants map to the "user" forms (help topic
; "Constants", Auto Constants): {autopf} is {userpf}, i.e. %LOCALAPPDATA%\Programs, {group} is the
; user's own Start menu and {autodesktop} the user's desktop.
DefaultDirName={autopf}\{#MyAppName}
DefaultGroupName={#MyAppName}
DisableProgramGroupPage=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist
OutputBaseFilename=EvalDesk-{#MyAppVersion}-setup
; installers/make_icons.py writes the .ico; a Qt without the ICO writer gives none, and then the
; setup file has Inno Setup's default icon instead of failing to build.
#if FileExists(IconFile)
SetupIconFile={#IconFile}
#endif
UninstallDisplayIcon={app}\{#MyAppExe}
UninstallDisplayName={#MyAppName} {#MyAppVersion}
Compression=lzma2/max
SolidCompression=yes
LZMANumBlockThreads=4
; Tell Explorer that file associations changed, so .evaldesk files get their icon at once (help
; topic "[Setup]: ChangesAssociations").
ChangesAssociations=yes
WizardStyle=modern

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
; The PyInstaller folder as it is: {app}\evaldesk.exe (the window), {app}\evaldesk-cli.exe (the
; command line) and {app}\_internal\. The app finds its bundled models through sys._MEIPASS, which
; is {app}\_internal: the all-MiniLM-L6-v2 embedding model (core/embeddings.py,
; bundled_model_path(), looks for its modules.json there) and the four chunks of the Gemma 3 270M
; file (core/llm/_local.py joins them once into %LOCALAPPDATA%\EvalDesk\Cache\models on first use).
; Keeping the folder layout unchanged is what keeps those look-ups working.
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\{#MyAppName}"; Filename: "{app}\{#MyAppExe}"
Name: "{group}\Uninstall {#MyAppName}"; Filename: "{uninstallexe}"
Name: "{autodesktop}\{#MyAppName}"; Filename: "{app}\{#MyAppExe}"; Tasks: desktopicon

[Registry]
; .evaldesk -> EvalDesk.Project, opened with "evaldesk.exe" "%1". Root HKCU with the subkey
; Software\Classes: the current user's own file types, which need no administrator rights (help
; topic "[Registry] section": "Using HKCR is not recommended, use HKA with the Subkey parameter set
; to Software\Classes"; HKA is HKCU in non administrative install mode, written out here).
; "By default, registry keys and values created by Setup are not deleted at uninstall time": the
; uninsdelete* flags below make the uninstaller remove exactly these entries and nothing else.
Root: HKCU; Subkey: "Software\Classes\.evaldesk"; ValueType: string; ValueName: ""; ValueData: "EvalDesk.Project"; Flags: uninsdeletevalue
Root: HKCU; Subkey: "Software\Classes\.evaldesk\OpenWithProgids"; ValueType: string; ValueName: "EvalDesk.Project"; ValueData: ""; Flags: uninsdeletevalue
Root: HKCU; Subkey: "Software\Classes\EvalDesk.Project"; ValueType: string; ValueName: ""; ValueData: "EvalDesk project"; Flags: uninsdeletekey
Root: HKCU; Subkey: "Software\Classes\EvalDesk.Project\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\{#MyAppExe},0"
Root: HKCU; Subkey: "Software\Classes\EvalDesk.Project\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\{#MyAppExe}"" ""%1"""
Root: HKCU; Subkey: "Software\Classes\Applications\{#MyAppExe}\SupportedTypes"; ValueType: string; ValueName: ".evaldesk"; ValueData: ""; Flags: uninsdeletekey

[UninstallDelete]
; The uninstaller deletes what [Files] installed and, besides that, only what this section names
; (help topic "[UninstallDelete] section"). It names one file: the copy of the built-in Gemma model
; the app unpacked from {app}\_internal (about 250 MB; EvalDesk makes it again if reinstalled).
; Everything else the user made stays: projects (saved wherever the user chose, usually
; Documents), settings, logs and downloaded model files in %LOCALAPPDATA%\EvalDesk.
Type: files; Name: "{localappdata}\EvalDesk\Cache\models\gemma-3-270m-q4_k_m.gguf"
Type: files; Name: "{localappdata}\EvalDesk\Cache\models\gemma-3-270m-q4_k_m.gguf.ok"

[Run]
Filename: "{app}\{#MyAppExe}"; Description: "{cm:LaunchProgram,{#MyAppName}}"; Flags: nowait postinstall skipifsilent
