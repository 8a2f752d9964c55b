package datasets

import (
	"errors"
	"fmt"
)

// FileError is the error returned for bad input files: it names the file,
// the 1-based line and column (0 when they do not apply) and what was
// wrong or expected. Its message reads "file:line:column: message".
// Use errors.As to retrieve it.
type FileError struct {
	File   string
	Line   int
	Column int
	Msg    string
	// Rows says that Line counts the rows of a file that has no lines (a
	// Parquet file: row 1 is the first data row) and Column the columns
	// (1 is the first): the message then reads "file: row R, column C:
	// message".
	Rows bool
	// Err is the underlying error, if any (for example fs.ErrNotExist).
	Err error
}

func (e *FileError) Error() string {
	s := "datasets: " + e.File
	if e.Rows {
		switch {
		case e.Line > 0 && e.Column > 0:
			s += fmt.Sprintf(": row %d, column %d", e.Line, e.Column)
		case e.Line > 0:
			s += fmt.Sprintf(": row %d", e.Line)
		case e.Column > 0:
			s += fmt.Sprintf(": column %d", e.Column)
		}
		return s + ": " + e.Msg
	}
	if e.Line > 0 {
		s += fmt.Sprintf(":%d", e.Line)
		if e.Column > 0 {
			s += fmt.Sprintf(":%d", e.Column)
		}
	}
	return s + ": " + e.Msg
}

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

func fileErr(file string, line, col int, format string, args ...any) *FileError {
	return &FileError{File: file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// rowErr is fileErr for files whose places are rows (Parquet).
func rowErr(file string, row, col int, format string, args ...any) *FileError {
	return &FileError{File: file, Line: row, Column: col, Rows: true, Msg: fmt.Sprintf(format, args...)}
}

// isFileError reports whether err is (or wraps) a *FileError.
func isFileError(err error) bool {
	var fe *FileError
	return errors.As(err, &fe)
}
