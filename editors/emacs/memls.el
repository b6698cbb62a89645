;;; memls.el --- memls language server for memory files via eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: languages, tools

;;; Commentary:

;; Registers the memls language server with eglot for coding-agent memory files
;; (MEMORY.md, checkpoint-*.md, .handoff.md, LOG.md), and adds commands that run
;; the server's operations:
;;
;;   (require 'memls)
;;   (add-hook 'markdown-mode-hook #'memls-eglot-ensure)
;;
;; M-x memls-checkpoint-save, M-x memls-checkpoint-resume, M-x memls-recall-search.

;;; Code:

(require 'eglot)
(require 'seq)

(defgroup memls nil
  "memls language server for coding-agent memory files."
  :group 'tools
  :prefix "memls-")

(defcustom memls-server-command '("python3" "-m" "memls.lsp")
  "Command line that starts the memls language server."
  :type '(repeat string))

(defcustom memls-initialization-options '(:staleDays 14)
  "Settings sent to the server as initializationOptions."
  :type 'plist)

(defconst memls-memory-file-regexp
  (rx (or "MEMORY.md" (seq "checkpoint-" (+ (not (any "/"))) ".md") ".handoff.md" "LOG.md") eos)
  "File names that memls checks.")

(defun memls-memory-file-p (&optional file)
  "Return non-nil when FILE (default: the current buffer's file) is a memory file."
  (let ((name (or file buffer-file-name)))
    (and name (string-match-p memls-memory-file-regexp (file-name-nondirectory name)))))

(defun memls--modes ()
  "Major modes memls serves: whichever Markdown modes exist."
  (seq-filter #'fboundp '(markdown-mode gfm-mode markdown-ts-mode text-mode)))

(add-to-list 'eglot-server-programs
             `(,(memls--modes)
               . (,@memls-server-command :initializationOptions ,memls-initialization-options)))

;;;###autoload
(defun memls-eglot-ensure ()
  "Start eglot with memls in memory-file buffers only."
  (when (memls-memory-file-p)
    (eglot-ensure)))

(defun memls--execute (command &optional arguments)
  "Run server COMMAND with the plist ARGUMENTS and return the result."
  (let ((server (eglot-current-server)))
    (unless server (user-error "memls: no language server in this buffer"))
    (eglot-execute-command server command (vector (or arguments
                                                      `(:uri ,(eglot-path-to-uri buffer-file-name)))))))

(defun memls--message (result)
  "Show the message of a command RESULT."
  (when-let* ((msg (and (listp result) (plist-get result :message))))
    (message "%s" msg)))

;;;###autoload
(defun memls-checkpoint-save (name)
  "Save checkpoint NAME (empty: derived from the git branch)."
  (interactive "sCheckpoint name (empty: branch): ")
  (memls--message
   (memls--execute "memls.checkpoint.save"
                   `(:uri ,(eglot-path-to-uri buffer-file-name)
                     ,@(unless (string-empty-p name) `(:name ,name))))))

;;;###autoload
(defun memls-checkpoint-resume (name)
  "Resume checkpoint NAME (empty: the only one, or a list)."
  (interactive "sResume checkpoint (empty: pick automatically): ")
  (memls--message
   (memls--execute "memls.checkpoint.resume"
                   `(:uri ,(eglot-path-to-uri buffer-file-name)
                     ,@(unless (string-empty-p name) `(:name ,name))))))

;;;###autoload
(defun memls-recall-search (query)
  "Search recall for QUERY and list the hits in a compilation-style buffer."
  (interactive "sRecall: ")
  (let* ((result (memls--execute "memls.recall.search"
                                 `(:query ,query :uri ,(eglot-path-to-uri buffer-file-name))))
         (hits (plist-get result :results)))
    (with-current-buffer (get-buffer-create "*memls recall*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "memls recall: %s (%s)\n\n" query (plist-get result :mode)))
        (seq-doseq (hit hits)
          (insert (format "%s:%d: [%s] %s — %s\n"
                          (plist-get hit :path) (1+ (plist-get hit :start_line))
                          (plist-get hit :kind) (or (plist-get hit :heading) "")
                          (plist-get hit :snippet))))
        (grep-mode))
      (display-buffer (current-buffer)))))

(provide 'memls)
;;; memls.el ends here
