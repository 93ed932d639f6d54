//! Errors of ncnn's shape expressions (Crop `19/20/21`, Reshape `6`, Interp `9`).

/// A shape expression that does not evaluate.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExpressionError {
    /// A token that is neither an operator, a blob extent nor a number.
    #[error("expression `{expr}`: malformed token `{token}`")]
    Token {
        /// The expression.
        expr: String,
        /// The token.
        token: String,
    },
    /// An operator with fewer operands than it takes.
    #[error("expression `{expr}`: `{op}` lacks an operand")]
    Operand {
        /// The expression.
        expr: String,
        /// The operator.
        op: String,
    },
    /// A blob extent (`1w`) of an input the layer was not given.
    #[error("expression `{expr}`: `{token}` names input {index}, the layer has {inputs}")]
    Blob {
        /// The expression.
        expr: String,
        /// The token.
        token: String,
        /// The input's index.
        index: usize,
        /// How many inputs there are.
        inputs: usize,
    },
    /// An integer division by zero.
    #[error("expression `{expr}`: integer division by zero")]
    DivideByZero {
        /// The expression.
        expr: String,
    },
    /// Nothing to evaluate.
    #[error("expression `{expr}` is empty")]
    Empty {
        /// The expression.
        expr: String,
    },
}
